/**
 * Chromium for the browser tests: the Debian package, or CHROMIUM_PATH in CI.
 * Without the binary a suite is skipped with a visible message, unless REQUIRE_SERVICES=1 (CI),
 * where that is a failure, as test/support/services.ts does for the stores.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type ConsoleMessage } from 'playwright-core';
import { describe } from 'vitest';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'];

export function describeWithChromium() {
  if (existsSync(CHROMIUM_PATH)) return describe;
  if (process.env.REQUIRE_SERVICES === '1') {
    throw new Error(`no Chromium at ${CHROMIUM_PATH} but REQUIRE_SERVICES=1: the browser tests must run (install chromium or set CHROMIUM_PATH)`);
  }
  console.warn(`\n  [skipped] browser tests: no Chromium at ${CHROMIUM_PATH}; install it or set CHROMIUM_PATH to run them\n`);
  return describe.skip;
}

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });

/**
 * Chromium reports every failed fetch as a console error. The console's first call answers 401
 * until the operator signs in, a wrong token a 403, and the history route may be absent (404,
 * shown as "No history"); these are the page working. Anything else (a CSP violation, a script
 * error) is a failure.
 */
export function unexpected(message: ConsoleMessage, base: string): boolean {
  if (message.type() !== 'error') return false;
  const url = message.location().url;
  const expectedStatus = /^Failed to load resource: the server responded with a status of (401|403|404)\b/.test(message.text());
  return !(expectedStatus && url.startsWith(`${base}/admin/`));
}
