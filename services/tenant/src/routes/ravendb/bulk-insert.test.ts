// RavenDB's bulk insert (a JSON array of commands, application/json) and its operation state, against a real
// tenant server on a temporary directory; the official client end to end: gateway's ravendb-compat suite.
import { describe, expect, it } from 'vitest';
import { sharedTenantServer } from '../../test-fixtures/tenant-server.js';
import { JsonArrayToLines } from './bulk-array.js';

const { call } = sharedTenantServer({ database: 'shop' });

const command = (id: string, name: string) =>
  JSON.stringify({ Id: id, Type: 'PUT', Document: { Name: name, '@metadata': { '@collection': 'Users' } } });

const bulkInsert = (operation: number, body: string) =>
  call('POST', `/databases/shop/bulk_insert?id=${operation}&skipOverwriteIfUnchanged=false`, body, {
    'content-type': 'application/json',
  });

describe('RavenDB bulk insert', () => {
  it('stores the array (pretty-printed too) and answers 204; the operation is Completed', async () => {
    const { Id } = (await call('GET', '/databases/shop/operations/next-operation-id')).json as { Id: number };
    const body = `[${command('users/1', 'a, "b" [c]')},\n  ${JSON.stringify({ Id: 'users/2', Type: 'PUT', Document: { Name: 'two' } }, null, 2)}\n]`;
    const reply = await bulkInsert(Id, body);
    expect(reply.status).toBe(204);
    expect((await call('GET', '/databases/shop/docs?id=users/1')).text).toContain('a, \\"b\\" [c]');
    expect((await call('GET', `/databases/shop/operations/state?id=${Id}`)).json).toEqual({
      Status: 'Completed',
      Result: { Total: 2 },
    });
  });

  it('a refused command: the problem, and the operation Faulted with its reason; the ones before stay', async () => {
    const { Id } = (await call('GET', '/databases/shop/operations/next-operation-id')).json as { Id: number };
    const reply = await bulkInsert(
      Id,
      `[${command('kept/1', 'k')},${command(`x/${'x'.repeat(600)}`, 'no')}]`,
    );
    expect(reply.status).toBe(400);
    const state = (await call('GET', `/databases/shop/operations/state?id=${Id}`)).json as {
      Status: string;
      Result: { Error: string };
    };
    expect(state.Status).toBe('Faulted');
    expect(state.Result.Error).toMatch(/Line 2 .*at most 512 bytes/);
    expect((await call('GET', '/databases/shop/docs?id=kept/1')).status).toBe(200);
  });

  it('refuses counters and a body that is not one closed array, by what is wrong', async () => {
    const counters = JSON.stringify({ Id: 'users/1', Type: 'Counters', Counters: {} });
    expect((await bulkInsert(1, `[${counters}]`)).text).toMatch(/only documents/);
    expect((await bulkInsert(1, command('users/9', 'x'))).text).toMatch(/does not start with \[/);
    expect((await bulkInsert(1, `[${command('users/9', 'x')}`)).text).toMatch(/ended before its closing \]/);
    expect((await bulkInsert(1, `[${command('users/9', 'x')}] x`)).text).toMatch(/after its closing \]/);
    for (const body of [
      `[,${command('users/9', 'x')}]`,
      `[${command('users/9', 'x')},,]`,
      `[${command('users/9', 'x')},]`,
    ])
      expect((await bulkInsert(1, body)).text, body).toMatch(/has an empty element/);
    expect((await bulkInsert(1, '[ ]')).status).toBe(204);
  });

  it('an unknown operation id is 404 OperationNotFound', async () => {
    const reply = await call('GET', '/databases/shop/operations/state?id=999999');
    expect(reply.status).toBe(404);
    expect(reply.text).toContain('OperationNotFound');
  });
});

describe('JsonArrayToLines', () => {
  it('gives the same lines however the body is cut into buffers', () => {
    const body = `[${command('a/1', 'x,]"\\\\')},${command('a/2', '{[')}]`;
    const whole = new JsonArrayToLines().push(Buffer.from(body)).toString();
    const framer = new JsonArrayToLines();
    const bytes = Buffer.from(body);
    let split = '';
    for (let i = 0; i < bytes.length; i++) split += framer.push(bytes.subarray(i, i + 1)).toString('latin1');
    framer.end();
    expect(split).toBe(whole);
    expect(
      whole
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).Id),
    ).toEqual(['a/1', 'a/2']);
  });
});
