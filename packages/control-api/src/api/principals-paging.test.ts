// GET …/principals pages: `start` and `pageSize` (bounded), and the total, so a tenant with thousands of
// principals is read a page at a time (the console's Tenant page does).
import type { Principal } from '@rookery/control-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ControlApiHarness,
  startControlApi,
  withOperatorAndAcme,
} from '../test-fixtures/control-api.js';

let h: ControlApiHarness;
let operator: Principal;
let admin: Principal;

beforeEach(async () => {
  h = await startControlApi();
  ({ operator, admin } = await withOperatorAndAcme(h));
  for (let i = 1; i <= 4; i++) {
    await h.store.createPrincipal({
      tenantId: 'acme',
      kind: 'program',
      name: `reader-${i}`,
      role: { kind: 'database', access: { shop: 'read-only' } },
    });
  }
});
afterEach(async () => h.close());

interface Page {
  principals: Principal[];
  total: number;
  start: number;
  pageSize: number;
}

describe('GET …/principals, paged', () => {
  it('answers pages of pageSize from start, in creation order, with the total', async () => {
    const everyone = (await h.store.listPrincipals('acme')).map((p) => p.name);
    expect(everyone).toHaveLength(5);
    const names: string[] = [];
    for (const start of [0, 2, 4]) {
      const reply = await h.call(admin, 'GET', `/control/principals?start=${start}&pageSize=2`);
      expect(reply.status).toBe(200);
      const page = reply.json as unknown as Page;
      expect({ total: page.total, start: page.start, pageSize: page.pageSize }).toEqual({
        total: 5,
        start,
        pageSize: 2,
      });
      names.push(...page.principals.map((p) => p.name));
    }
    expect(names).toEqual(everyone);
    // An operator names the tenant; past the end is an empty page, not an error.
    const past = await h.call(operator, 'GET', '/control/tenants/acme/principals?start=5&pageSize=2');
    expect(past.json).toEqual({ principals: [], total: 5, start: 5, pageSize: 2 });
  });

  it('defaults to the first 100', async () => {
    const reply = await h.call(admin, 'GET', '/control/principals');
    const page = reply.json as unknown as Page;
    expect({ total: page.total, start: page.start, pageSize: page.pageSize }).toEqual({
      total: 5,
      start: 0,
      pageSize: 100,
    });
    expect(page.principals).toHaveLength(5);
  });

  it('refuses a page size over 1000, a negative start and unknown parameters with 400 and the limit', async () => {
    // A start past what a database takes as an offset (1e20 is an integer to JavaScript, not to SQLite).
    const huge = ['start=1e20', 'start=99999999999999999999', 'start=Infinity', 'pageSize=1.5'];
    for (const query of ['pageSize=1001', 'pageSize=0', 'start=-1', 'start=x', 'limit=5', ...huge]) {
      const reply = await h.call(admin, 'GET', `/control/principals?${query}`);
      expect({ query, status: reply.status, code: reply.json.code }).toEqual({
        query,
        status: 400,
        code: 'InvalidRequest',
      });
    }
    const tooBig = await h.call(admin, 'GET', '/control/principals?pageSize=1001');
    expect(tooBig.json.detail).toMatch(/1000/);
  });
});
