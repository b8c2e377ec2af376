import { describe, expect, it } from 'vitest';
import { countedAddress } from '../../src/core/client-address.js';

describe('countedAddress: what the brute-force limits count as one caller', () => {
  it.each([
    ['198.51.100.7', '198.51.100.7'],
    // A dual-stack socket reports IPv4 peers as IPv4-mapped IPv6 (RFC 4291 2.5.5.2), in either notation.
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['::FFFF:c633:6407', '198.51.100.7'],
    // RFC 6177: one end site holds a /56; every address in it counts as one.
    ['2001:db8:0:1200::1', '2001:db8:0:1200::/56'],
    ['2001:db8:0:12ff:ffff:ffff:ffff:ffff', '2001:db8:0:1200::/56'],
    ['2001:0DB8:0000:12ab:0:0:0:5', '2001:db8:0:1200::/56'],
    ['fe80::1%eth0', 'fe80:0:0:0::/56'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (ip, counted) => {
    expect(countedAddress(ip)).toBe(counted);
  });

  it('neighbouring /56 networks count apart', () => {
    expect(countedAddress('2001:db8:0:1300::1')).not.toBe(countedAddress('2001:db8:0:1200::1'));
  });
});
