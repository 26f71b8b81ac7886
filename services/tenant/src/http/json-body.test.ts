// The tenant's JSON body parser on a real fastify server: bodies that cannot hold a refused key are parsed
// without secure-json-parse's scans, and every other body gets the same answer fastify's parser gives.
import { RookeryError } from '@rookery/protocol';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cannotHoldPoisonedKeys, limitJsonNesting } from './json-body.js';

const app = Fastify({ logger: false });
let base: string;
beforeAll(async () => {
  limitJsonNesting(app);
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) =>
    reply
      .code(error instanceof RookeryError ? 400 : (error.statusCode ?? 500))
      .send({ error: error instanceof RookeryError ? error.code : error.message }),
  );
  app.put('/echo', async (request) => ({ body: request.body }));
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => app.close());

const put = async (body: string) => {
  const response = await fetch(`${base}/echo`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, json: (await response.json()) as { body?: unknown; error?: string } };
};

describe('the JSON body parser', () => {
  it('parses plain documents, nested and with unicode text', async () => {
    expect(await put('{"Name":"Zoë","Tags":["a",{"b":[1,2.5,null,true]}]}')).toEqual({
      status: 200,
      json: { body: { Name: 'Zoë', Tags: ['a', { b: [1, 2.5, null, true] }] } },
    });
  });

  it.each([
    ['a __proto__ key', '{"a":{"__proto__":{"admin":true}}}'],
    ['a \\u-escaped __proto__ key', '{"\\u005f_proto__":{"admin":true}}'],
    ['a constructor.prototype', '{"constructor":{"prototype":{"admin":true}}}'],
    ['a \\u-escaped constructor', '{"\\u0063onstructor":{"prototype":{"admin":true}}}'],
  ])('refuses %s with 400', async (_name, body) => {
    expect(cannotHoldPoisonedKeys(body)).toBe(false);
    const answer = await put(body);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatch(/not valid JSON/); // fastify's refusal, as before
  });

  it('keeps "constructor" as a value and __proto__ inside a string as text (the slow path, same answer)', async () => {
    expect(await put('{"Role":"constructor","Note":"__proto__ is a word"}')).toEqual({
      status: 200,
      json: { body: { Role: 'constructor', Note: '__proto__ is a word' } },
    });
  });

  it.each([
    ['an empty body', ''],
    ['malformed JSON', '{"a":'],
    ['a byte-order mark before the JSON', '\uFEFF{"a":1}'],
  ])('answers %s as fastify does', async (_name, body) => {
    const reference = Fastify({ logger: false });
    reference.put('/echo', async (request) => ({ body: request.body }));
    const referenceAnswer = await reference.inject({
      method: 'PUT',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    const answer = await put(body);
    expect(answer.status).toBe(referenceAnswer.statusCode);
    await reference.close();
  });

  it('refuses nesting deeper than a document may with NestingTooDeep, on the fast path too', async () => {
    const deep = `${'['.repeat(400)}${']'.repeat(400)}`;
    expect(cannotHoldPoisonedKeys(deep)).toBe(true);
    const answer = await put(`{"a":${deep}}`);
    expect(answer).toEqual({ status: 400, json: { error: 'NestingTooDeep' } });
  });
});
