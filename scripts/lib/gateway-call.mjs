// One request to a gateway with the first tenant admin's certificate files (bootstrap's), for `npm start`
// (one machine and a local fleet): JSON in, the status and the body's text out.
import fs from 'node:fs';
import https from 'node:https';

/** `admin`: bootstrap's answer (`caFile`, `certFile`, `keyFile`). Gives up after 60 s without an answer. */
export function callGateway(url, admin, method, urlPath, body) {
  return new Promise((resolve, reject) => {
    const request = https.request(
      new URL(urlPath, url),
      {
        method,
        ca: fs.readFileSync(admin.caFile),
        cert: fs.readFileSync(admin.certFile),
        key: fs.readFileSync(admin.keyFile),
        servername: 'localhost',
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode, body: text }));
      },
    );
    request.once('error', reject);
    request.setTimeout(60_000, () => request.destroy(new Error('no answer within 60 s')));
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
