import { describe, expect, it } from 'vitest';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

// What one answer may hold (ROOKERY_MAX_RESPONSE_BYTES, here 1 MiB) and the small messages of the documents
// routes, on a real tenant server.
const LIMIT = 1024 * 1024;
const { call } = sharedTenantServer({ database: 'shop', config: { maxResponseBytes: LIMIT } });

const blob = (kb: number) => ({ Text: 'q'.repeat(kb * 1024), '@metadata': { '@collection': 'Blobs' } });

describe('the response budget', () => {
  it('refuses a GET whose ids repeat a document past the budget, and answers the same ids once', async () => {
    expect((await call('PUT', '/databases/shop/docs?id=blobs/1', blob(100))).status).toBe(201);
    const ids = Array.from({ length: 11 }, () => 'id=blobs/1').join('&');
    const refused = await call('GET', `/databases/shop/docs?${ids}`);
    expect([refused.status, refused.json.code, refused.json.limitBytes]).toEqual([
      413,
      'ResponseTooLarge',
      LIMIT,
    ]);
    expect(refused.json.detail).toMatch(/1 MiB.*ROOKERY_MAX_RESPONSE_BYTES.*fewer ids.*streams\/docs/);
    const ten = await call('GET', `/databases/shop/docs?${ids.split('&').slice(0, 9).join('&')}`);
    expect(ten.status).toBe(200);
    expect(ten.json.Results).toHaveLength(9);
  });

  it('counts included documents', async () => {
    for (let i = 0; i < 12; i++) {
      const put = await call('PUT', `/databases/shop/docs?id=parts/${i}`, blob(100));
      expect(put.status).toBe(201);
    }
    const order = {
      Parts: Array.from({ length: 12 }, (_, i) => `parts/${i}`),
      '@metadata': { '@collection': 'Orders' },
    };
    expect((await call('PUT', '/databases/shop/docs?id=orders/1', order)).status).toBe(201);
    const reply = await call('GET', '/databases/shop/docs?id=orders/1&include=Parts');
    expect([reply.status, reply.json.code]).toEqual([413, 'ResponseTooLarge']);
    const query = await call('POST', '/databases/shop/queries', { Query: 'from Orders include Parts' });
    expect([query.status, query.json.code]).toEqual([413, 'ResponseTooLarge']);
  });

  it('refuses a query page past the budget, and streams it in pages', async () => {
    const page = await call('POST', '/databases/shop/queries', { Query: 'from Blobs' });
    expect([page.status, page.json.code]).toEqual([413, 'ResponseTooLarge']);
    expect(page.json.detail).toMatch(/limit.*streams\/queries/);
    const streamed = await call('POST', '/databases/shop/streams/queries', { Query: 'from Blobs' });
    expect(streamed.status).toBe(200);
    expect(streamed.text.trim().split('\n')).toHaveLength(13 + 1);
  });
});

describe('the documents routes', () => {
  it('says how to send a missing id', async () => {
    for (const method of ['GET', 'DELETE']) {
      const reply = await call(method, '/databases/shop/docs');
      expect(reply.status).toBe(400);
      expect(reply.json.detail).toContain('the id query parameter is required: …/docs?id=users/1-A');
    }
    const put = await call('PUT', '/databases/shop/docs', { Name: 'x' });
    expect(put.json.detail).toContain('the id query parameter is required');
  });

  it('answers 204 to a DELETE of a document that does not exist, as RavenDB does', async () => {
    expect((await call('DELETE', '/databases/shop/docs?id=nobody/1')).status).toBe(204);
  });
});
