// Tenants cold start: users read one document of a tenant drawn at random
// from hundreds, through an operator's certificate (`/tenants/{id}/…`). The
// tenants stop after a few idle seconds (ROOKERY_IDLE_STOP_MS), so most reads
// wake a sleeping tenant. A wake that is not ready within the host's deadline
// answers 503 TenantStarting with Retry-After: the user waits that long and
// asks again, as a client should; the page time is from the first request to
// the document, retries included.
import { sleep } from 'k6';
import http from 'k6/http';
import { baseOptions, config, page, pick, runTest } from './lib.js';

export { handleSummary } from './lib.js';

export const options = baseOptions();

const { tenants, database, documentId, maxAttempts } = config.coldStart;

function wakeAndRead() {
  const tenant = pick(tenants);
  const url = `${config.baseUrl}/tenants/${tenant}/databases/${database}/docs?id=${documentId}`;
  const started = Date.now();
  let res = null;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    res = http.get(url, { tags: { name: 'wake-and-read' } });
    if (res.status !== 503) break;
    sleep(Number(res.headers['Retry-After'] || 1));
  }
  return { res, ms: Date.now() - started };
}

export default function () {
  runTest('cold-start', [
    () =>
      page(
        'wake-and-read',
        'cold-start',
        wakeAndRead,
        (a) => a.res.status === 200,
        (a) => a.ms,
      ),
  ]);
}
