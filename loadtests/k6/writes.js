// Writes: durable saves from many users at once, through the gateway. Most
// iterations save one document (PUT, acknowledged after its transaction's
// fsync); one in five saves a batch of BATCH documents in one ACID bulk_docs
// request. Concurrent saves are merged by the tenant's transaction merger:
// this is what the merger is for.
import exec from 'k6/execution';
import http from 'k6/http';
import { baseOptions, config, page, runTest } from './lib.js';

export { handleSummary } from './lib.js';

export const options = baseOptions();

const base = `${config.baseUrl}/databases/${config.database}`;
const params = { headers: { 'content-type': 'application/json' } };
const { batchSize, batchShare } = config.writes;
const created = (res) => res.status === 201;

let sequence = 0;

/** An order of about 1 KB, like the documents of the writes benchmark. */
function order() {
  sequence++;
  return {
    Company: `companies/${(exec.vu.idInTest * 7919 + sequence) % 5000}`,
    Employee: `employees/${sequence % 50}`,
    OrderedAt: new Date().toISOString(),
    ShipTo: {
      City: 'Lyon',
      Country: 'France',
      Line1: `${sequence} rue de la République`,
      PostalCode: '69002',
    },
    Lines: Array.from({ length: 5 }, (_, i) => ({
      Product: `products/${(sequence * 31 + i) % 77}`,
      ProductName: 'Chef Anton’s Gumbo Mix, 12 boxes of 500 g',
      PricePerUnit: 21.35,
      Quantity: 1 + ((sequence + i) % 9),
      Discount: 0.05,
    })),
    Freight: 32.38,
    '@metadata': { '@collection': 'Orders' },
  };
}

// Ids unique per user and save, so saves never conflict: conflicts are not what this measures.
const id = () => `orders/${exec.vu.idInTest}-${exec.vu.iterationInInstance}-${sequence}`;

function saveOne() {
  const body = JSON.stringify(order());
  page(
    'save-one',
    'writes',
    () => http.put(`${base}/docs?id=${id()}`, body, { ...params, tags: { name: 'save-one' } }),
    created,
  );
}

function saveBatch() {
  const commands = [];
  for (let i = 0; i < batchSize; i++) commands.push({ Type: 'PUT', Id: id(), Document: order() });
  const body = JSON.stringify({ Commands: commands });
  page(
    `save-batch-${batchSize}`,
    'writes',
    () => http.post(`${base}/bulk_docs`, body, { ...params, tags: { name: 'save-batch' } }),
    created,
  );
}

export default function () {
  runTest('writes', [Math.random() < batchShare ? saveBatch : saveOne]);
}
