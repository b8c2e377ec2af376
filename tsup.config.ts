import { cp } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    express: 'adapters/express.ts',
    koa: 'adapters/koa.ts',
    connect: 'adapters/connect.ts',
    fastify: 'adapters/fastify.ts',
    fetch: 'adapters/fetch.ts',
    hono: 'adapters/hono.ts',
    sandbox: 'src/sandbox/index.ts',
    // `npx courier-platform`: the package's bin (docs/operator.md).
    cli: 'src/cli/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // No source maps: the output is not minified and keeps the source's names and layout, so a stack
  // trace into dist/ reads as it is. Maps with their sources would ship the whole of src/ a second
  // time (most of the tarball); maps without them would point at files the package does not ship.
  sourcemap: false,
  target: 'node20',
  splitting: true,
  // `import.meta.url` in the CommonJS build too: the console finds its files beside the code.
  shims: true,
  // The operator console's script and stylesheet (src/admin/console/assets.ts reads them from
  // `./assets/` beside the bundle, as it does beside its source).
  async onSuccess() {
    await cp('src/admin/console/assets', 'dist/assets', { recursive: true });
  },
});
