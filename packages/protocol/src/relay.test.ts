// What a relay's ClientHello may name (relay.ts, "The hand-off"): read by a host before the peer proved
// anything, so every malformed name or epoch is "none", never a tenant or a number it did not say.
import { describe, expect, it } from 'vitest';
import { epochOfRelayAlpn, relayAlpn, relayServerName, tenantOfRelayServerName } from './relay.js';

describe('relay server names and ALPN epochs', () => {
  it('read back what they write', () => {
    expect(tenantOfRelayServerName(relayServerName('acme-2'))).toBe('acme-2');
    expect(epochOfRelayAlpn(['http/1.1', relayAlpn(42)])).toBe(42);
  });

  it('name no tenant for another suffix, an invalid id, or more labels', () => {
    for (const name of [
      null,
      '',
      'acme',
      'acme.tenant.rookery.evil',
      'Acme.tenant.rookery',
      '-acme.tenant.rookery',
      'a.b.tenant.rookery',
      '.tenant.rookery',
      `${'a'.repeat(64)}.tenant.rookery`,
    ])
      expect(tenantOfRelayServerName(name)).toBeNull();
  });

  it('take no epoch that is not a whole number in range', () => {
    for (const protocol of [
      'rookery-relay/',
      'rookery-relay/1e3',
      'rookery-relay/-1',
      'rookery-relay/0x10',
      'rookery-relay/99999999999',
      'rookery-relay/1 ',
    ])
      expect(epochOfRelayAlpn([protocol])).toBeNull();
    expect(epochOfRelayAlpn([])).toBeNull();
  });
});
