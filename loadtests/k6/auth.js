// Auth: every request on a new connection (noConnectionReuse), so every page
// pays a full TLS handshake with a client certificate, as clients that do not
// keep connections do. The certificate is a person's: without a two-factor
// session its requests get 401 TwoFactorRequired, and a user who meets that
// opens a session with the TOTP code of the moment (POST /auth/2fa, bound to
// the certificate, one minute long), then reads again. All users share the
// person's certificate (k6 presents one client certificate per process: its
// tlsAuth `domains` never selected among several, grafana/k6#5153), so one
// user opens the session and the others get TwoFactorCodeReused for the same
// code — the session they need is open by then.
import { sleep } from 'k6';
import http from 'k6/http';
import { baseOptions, config, page, runTest } from './lib.js';

export { handleSummary } from './lib.js';

const { codes, database, documentId, sessionMinutes } = config.auth;

export const options = baseOptions({ noConnectionReuse: true });

const url = `${config.baseUrl}/databases/${database}/docs?id=${documentId}`;
const json = { headers: { 'content-type': 'application/json' } };
// Connecting plus the TLS handshake plus the request: what a client without kept connections waits for.
const withHandshake = (res) => res.timings.connecting + res.timings.tls_handshaking + res.timings.duration;
const refused = (res) => res.status === 401 && res.body.indexOf('TwoFactorRequired') !== -1;
const codeReused = (res) => res.status === 401 && res.body.indexOf('TwoFactorCodeReused') !== -1;

function read(name, ok) {
  return page(name, 'auth', () => http.get(url, { tags: { name } }), ok, withHandshake);
}

function personRead() {
  if (!refused(read('read', (r) => r.status === 200 || refused(r)))) return;
  // No session (yet, or any more): open one with the code of this 30 s step.
  for (let attempt = 0; attempt < 2; attempt++) {
    const body = JSON.stringify({
      code: codes[Math.floor(Date.now() / 30_000)],
      minutes: sessionMinutes,
      binding: 'certificate',
    });
    const opened = page(
      'totp-session',
      'auth',
      () => http.post(`${config.baseUrl}/auth/2fa`, body, { ...json, tags: { name: 'totp-session' } }),
      (r) => r.status === 201 || codeReused(r),
      withHandshake,
    );
    // Opened here, or by another user with this step's code a moment ago.
    if (!refused(read('read-after-session', (r) => r.status === 200 || refused(r)))) return;
    // Refused still: this step's code went to an earlier session that has ended. The next step's code.
    if (codeReused(opened)) sleep(30 - ((Date.now() / 1000) % 30) + 0.2);
  }
}

export default function () {
  runTest('auth', [personRead]);
}
