import { describe, expect, it } from 'vitest';
import { countedAddress } from '../../src/core/client-address.js';

describe('countedAddress: what the brute-force limits count as one caller', () => {
  it.each([
    ['198.51.100.7', '198.51.100.7'],
    // RFC 7239 6: a proxy may write the port, and brackets around IPv6; neither makes a fresh count.
    ['198.51.100.7:443', '198.51.100.7'],
    ['198.51.100.7:50123', '198.51.100.7'],
    ['[2001:db8:0:1200::1]', '2001:db8:0:1200::/56'],
    ['[2001:db8:0:1200::1]:443', '2001:db8:0:1200::/56'],
    ['[::ffff:198.51.100.7]:8080', '198.51.100.7'],
    // A dual-stack socket reports IPv4 peers as IPv4-mapped IPv6 (RFC 4291 2.5.5.2), in either notation.
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['::FFFF:c633:6407', '198.51.100.7'],
    // RFC 6177: one end site holds a /56; every address in it counts as one.
    ['2001:db8:0:1200::1', '2001:db8:0:1200::/56'],
    ['2001:db8:0:12ff:ffff:ffff:ffff:ffff', '2001:db8:0:1200::/56'],
    ['2001:0DB8:0000:12ab:0:0:0:5', '2001:db8:0:1200::/56'],
    // RFC 3056 2: a 6to4 site's /48 is its IPv4's: every /56 of it counts as that IPv4.
    ['2002:c633:6407:12ab::1', '198.51.100.7'],
    ['2002:c633:6407:ff00::1', '198.51.100.7'],
    // RFC 4193 3.1: a unique local /48 is one site's.
    ['fd12:3456:789a:12ab::1', 'fd12:3456:789a:1200::/56'],
    // RFC 2765 2.1: an IPv4-translated address counts as its IPv4.
    ['::ffff:0:198.51.100.7', '198.51.100.7'],
    // RFC 6052 2.1: a translator's well-known prefix holds every IPv4 client; each counts as its IPv4.
    ['64:ff9b::198.51.100.7', '198.51.100.7'],
    ['64:ff9b::c633:6407', '198.51.100.7'],
    // RFC 8215: the local-use prefix may carry the IPv4 anywhere (RFC 6052 2.2); the whole address counts.
    ['64:ff9b:1::198.51.100.7', '64:ff9b:1:0:0:0:c633:6407'],
    ['64:ff9b:1:c633:64:700::', '64:ff9b:1:c633:64:700:0:0'],
    // RFC 4291 2.5.5.1: an IPv4-compatible address counts as its IPv4.
    ['::198.51.100.7', '198.51.100.7'],
    // RFC 4291 2.5.2, 2.5.3: the unspecified and loopback addresses are one host each.
    ['::', '0:0:0:0:0:0:0:0'],
    ['::1', '0:0:0:0:0:0:0:1'],
    // RFC 4380 4: a Teredo address counts as its client's public IPv4, stored inverted (RFC 4380 Figure 1).
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '192.0.2.45'],
    // RFC 4291 2.5.6: a host picks its link-local addresses, so the link counts, named by its zone id (RFC 4007 11).
    ['fe80::1%eth0', 'fe80::/10%eth0'],
    ['FE80::1%ETH0', 'fe80::/10%eth0'],
    ['febf:ffff::1', 'fe80::/10%'],
    ['not an address', 'not an address'],
  ])('%s counts as %s', (ip, counted) => {
    expect(countedAddress(ip)).toBe(counted);
  });

  it('neighbouring /56 networks count apart', () => {
    expect(countedAddress('2001:db8:0:1300::1')).not.toBe(countedAddress('2001:db8:0:1200::1'));
  });

  it('RFC 6052 2.1: two IPv4 clients behind one NAT64 translator count apart, and as their own IPv4', () => {
    expect(countedAddress('64:ff9b::192.0.2.1')).not.toBe(countedAddress('64:ff9b::192.0.2.2'));
    expect(countedAddress('64:ff9b::192.0.2.1')).toBe(countedAddress('192.0.2.1'));
  });

  it('RFC 4380 4: two clients of one Teredo server count apart; one client counts once whatever its port', () => {
    // Server 65.54.227.120; clients 192.0.2.45 and 192.0.2.46, inverted in the last 32 bits.
    expect(countedAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')).not.toBe(countedAddress('2001:0:4136:e378:8000:63bf:3fff:fdd1'));
    expect(countedAddress('2001:0:4136:e378:8000:1234:3fff:fdd2')).toBe(countedAddress('192.0.2.45'));
  });

  it('RFC 4291 2.5.6: fresh link-local addresses on one link are one caller; another link counts apart', () => {
    expect(countedAddress('fe80::1%eth0')).toBe(countedAddress('fe80::2%eth0'));
    expect(countedAddress('fe80::1%eth0')).not.toBe(countedAddress('fe80::1%eth1'));
  });

  it('RFC 3056 2: fresh /56 networks of one 6to4 site are one caller, its IPv4', () => {
    expect(countedAddress('2002:c633:6407:100::1')).toBe(countedAddress('2002:c633:6407:200::1'));
    expect(countedAddress('2002:c633:6407::1')).toBe(countedAddress('198.51.100.7'));
  });
});
