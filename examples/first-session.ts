// Connects to the Rookery that `npm start` runs, with the admin certificate it made, stores a document
// in a session and reads it back. Run it from anywhere: npx tsx examples/first-session.ts
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DocumentStore } from '@rookery/client';

// Where `npm start` keeps its data and answers; set ROOKERY_DATA and ROOKERY_URL if you moved them.
const certs = path.join(
  process.env.ROOKERY_DATA ?? path.join(import.meta.dirname, '../.rookery/data'),
  'certs',
);
const store = new DocumentStore({
  url: process.env.ROOKERY_URL ?? 'https://localhost:8443',
  database: 'demo',
  certificate: {
    cert: readFileSync(path.join(certs, 'admin.crt'), 'utf8'),
    key: readFileSync(path.join(certs, 'admin.key'), 'utf8'),
  },
  ca: readFileSync(path.join(certs, 'ca.crt'), 'utf8'),
}).initialize();

const session = store.openSession();
await session.store({ Name: 'Grace Hopper', '@metadata': { '@collection': 'Users' } }, 'users/grace-hopper');
await session.saveChanges();

const grace = await store.openSession().load<{ Name: string }>('users/grace-hopper');
console.log(`Stored and loaded users/grace-hopper: ${grace?.Name}`);
await store.close();
