import { describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../../src/oauth/throttle.js';

describe('createLoginThrottle: failed logins per user name and per IP', () => {
  it('blocks a user name after its failures, from any IP, with the seconds to wait', async () => {
    const logins = createLoginThrottle({ failures: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      expect(await logins.check('Demo', `10.0.0.${i}`)).toBe(0);
      await logins.failed('Demo', `10.0.0.${i}`);
    }
    const wait = await logins.check('demo', '10.0.0.99');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
  });

  it('blocks an IP that tries many user names', async () => {
    const logins = createLoginThrottle({ failures: 3, windowSeconds: 60 });
    for (const user of ['a', 'b', 'c']) await logins.failed(user, '192.0.2.7');
    expect(await logins.check('someone-else', '192.0.2.7')).toBeGreaterThan(0);
    expect(await logins.check('someone-else', '192.0.2.8')).toBe(0);
  });

  it('a successful login clears the user name, not the IP', async () => {
    const logins = createLoginThrottle({ failures: 2, windowSeconds: 60 });
    await logins.failed('demo', '198.51.100.1');
    await logins.succeeded('demo');
    await logins.failed('demo', '198.51.100.2');
    expect(await logins.check('demo', '198.51.100.3')).toBe(0);
  });
});
