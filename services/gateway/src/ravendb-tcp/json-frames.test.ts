// The splitting of RavenDB's back-to-back JSON messages, byte by byte where it matters: a message cut
// anywhere across reads, braces and quotes inside strings, escapes, UTF-8, and what is refused.
import { RookeryError } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig, ravenTcpOf } from '../config.js';
import { JsonFrameReader } from './json-frames.js';

const messages = [
  { DatabaseName: 'shop', Operation: 'Subscription', OperationVersion: 53000 },
  { SubscriptionName: 'a}"{b', Nested: { Deep: ['{', '}', '\\', '"'] } },
  { Type: 'Acknowledge', ChangeVector: 'A:1-ünïcødé 🐦' },
];
const stream = Buffer.from(`${messages.map((m) => JSON.stringify(m)).join('')}\r\n`, 'utf8');

function failureOf(run: () => unknown): RookeryError {
  try {
    run();
  } catch (error) {
    if (error instanceof RookeryError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('JsonFrameReader', () => {
  it('splits back-to-back messages, whatever reads they come in', () => {
    for (const size of [1, 2, 3, 7, 64, stream.length]) {
      const reader = new JsonFrameReader(1024);
      const got: unknown[] = [];
      for (let i = 0; i < stream.length; i += size) {
        for (const text of reader.push(stream.subarray(i, i + size))) got.push(JSON.parse(text));
      }
      expect(got, `reads of ${size} bytes`).toEqual(messages);
    }
  });

  it('refuses what is not a JSON object, and a message over its limit as soon as it is held', () => {
    expect(failureOf(() => new JsonFrameReader(1024).push(Buffer.from('[1,2]'))).code).toBe('InvalidRequest');
    const reader = new JsonFrameReader(100);
    reader.push(Buffer.from(`{"a":"${'x'.repeat(50)}`));
    const refused = failureOf(() => reader.push(Buffer.from('x'.repeat(60))));
    expect(refused.code).toBe('PayloadTooLarge');
    expect(refused.message).toMatch(/at most 100 bytes/);
  });
});

describe('ROOKERY_RAVEN_TCP_PORT', () => {
  const base = { ROOKERY_INTERNAL_TOKEN: 'x'.repeat(16) };
  it('is 38888 by default, a free port when the HTTPS port is 0, a given port, or off', () => {
    expect(ravenTcpOf(loadGatewayConfig(base))?.port).toBe(38888);
    expect(ravenTcpOf(loadGatewayConfig({ ...base, ROOKERY_GATEWAY_PORT: '0' }))?.port).toBe(0);
    expect(ravenTcpOf(loadGatewayConfig({ ...base, ROOKERY_RAVEN_TCP_PORT: '4000' }))?.port).toBe(4000);
    expect(ravenTcpOf(loadGatewayConfig({ ...base, ROOKERY_RAVEN_TCP_PORT: 'off' }))).toBeNull();
    expect(() => loadGatewayConfig({ ...base, ROOKERY_RAVEN_TCP_PORT: 'sometimes' })).toThrow(
      /ROOKERY_RAVEN_TCP_PORT/,
    );
  });
});
