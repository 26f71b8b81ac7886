// Auth: every request on a new connection (noConnectionReuse), so every page
// pays a full TLS handshake with a client certificate, as clients that do not
// keep connections do. Each user is also a person: their certificate alone
// gets 401 TwoFactorRequired until they open a two-factor session with the
// TOTP code of the moment (POST /auth/2fa, bound to the certificate, one
// minute long), after which their reads pass. Codes are single-use: a person
// whose code for this 30 s step was already taken waits for the next one.
import { sleep } from 'k6';
import exec from 'k6/execution';
import http from 'k6/http';
import { baseOptions, config, page, runTest } from './lib.js';

export { handleSummary } from './lib.js';

const { persons, database, documentId, sessionMinutes } = config.auth;

export const options = baseOptions({
  noConnectionReuse: true,
  hosts: Object.fromEntries(persons.map((p) => [p.host, '127.0.0.1'])),
});

const port = new URL(config.baseUrl).port;
const docPath = `/databases/${database}/docs?id=${documentId}`;
const json = { headers: { 'content-type': 'application/json' } };
// Connecting plus the TLS handshake plus the request: what a client without kept connections waits for.
const withHandshake = (res) => res.timings.connecting + res.timings.tls_handshaking + res.timings.duration;

function person() {
  return persons[(exec.vu.idInTest - 1) % persons.length];
}

function programRead() {
  page(
    'program-read',
    'auth',
    () => http.get(`${config.baseUrl}${docPath}`, { tags: { name: 'program-read' } }),
    (res) => res.status === 200,
    withHandshake,
  );
}

const refusedForTwoFactor = (res) => res.status === 401 && res.body.indexOf('TwoFactorRequired') !== -1;

function personRead() {
  const me = person();
  const base = `https://${me.host}:${port}`;
  const res = page(
    'person-read',
    'auth',
    () => http.get(`${base}${docPath}`, { tags: { name: 'person-read' } }),
    (r) => r.status === 200 || refusedForTwoFactor(r),
    withHandshake,
  );
  if (!refusedForTwoFactor(res)) return;
  // No session (yet, or any more): open one with the code of this 30 s step.
  for (let attempt = 0; attempt < 3; attempt++) {
    const step = Math.floor(Date.now() / 30_000);
    const body = JSON.stringify({ code: me.codes[step], minutes: sessionMinutes, binding: 'certificate' });
    const opened = page(
      'totp-session',
      'auth',
      () => http.post(`${base}/auth/2fa`, body, { ...json, tags: { name: 'totp-session' } }),
      (r) => r.status === 200 || (r.status === 401 && r.body.indexOf('TwoFactorCodeReused') !== -1),
      withHandshake,
    );
    if (opened.status === 200) break;
    // This step's code was used (another user of the same certificate, or this one a moment ago).
    sleep(30 - ((Date.now() / 1000) % 30) + 0.2);
  }
  page(
    'person-read-in-session',
    'auth',
    () => http.get(`${base}${docPath}`, { tags: { name: 'person-read-in-session' } }),
    (r) => r.status === 200,
    withHandshake,
  );
}

export default function () {
  runTest('auth', [programRead, personRead]);
}
