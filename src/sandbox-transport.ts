import { createSandbox } from './sandbox/index.js';
import type { SignerOption } from './courier/signing.js';
import type { CourierTransport } from './courier/transport.js';

/**
 * The transport used when no upstream is configured: the bundled sandbox answers in-process, so
 * `courierPlatform()` with no options still has working courier operations to develop against. It lives beside platform.ts because
 * the sandbox imports the courier protocol (signing, operation names) and courier/ never imports
 * the sandbox.
 */
export function createInProcessSandboxTransport(signer: SignerOption | undefined): CourierTransport {
  const sandbox = createSandbox(signer === undefined ? {} : { signer });
  return async (call) => sandbox.handle(call.body);
}
