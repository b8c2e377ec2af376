import { defineConfig } from 'vitest/config';

/** Pure logic: no server, no store, no child process (CONTRIBUTING.md, Tests). */
const UNIT = 'test/**/*.unit.test.ts';
/** The files that share the run's Redis Cluster (test/support/redis-cluster.ts). */
const CLUSTER = 'test/**/*cluster.test.ts';

export default defineConfig({
  // The examples import the package by name (as users do); tsconfig.json maps it to the sources.
  resolve: { tsconfigPaths: true },
  test: {
    testTimeout: 15_000,
    hookTimeout: 30_000,
    // Vitest's default, pinned: a suite's beforeAll hooks run one after another, in the order they
    // were registered, and the store conformance concerns read the store their entry's beforeAll built.
    sequence: { hooks: 'stack' },
    // Two files at once (vitest's default on two cores is one): integration files spend most of
    // their time waiting on sockets and stores, and each keeps ports and keys of its own.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [UNIT],
          // One module graph for every file: nothing here keeps state between files.
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'types',
          // The .test-d.ts files: what the compiler accepts from users, checked by tsc, never run.
          typecheck: { enabled: true, only: true, include: ['test/**/*.test-d.ts'], tsconfig: './test/types/tsconfig.json' },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [UNIT, CLUSTER],
          // Each worker process runs file after file on one module graph: loading the library and the
          // frameworks once per worker instead of once per file. Files keep ports, keys and schemas of
          // their own, and what a test needs fresh it loads itself (vi.resetModules).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: [CLUSTER],
          // Started only when a file of this project runs, and shared by all of them.
          globalSetup: ['test/support/redis-cluster.ts'],
        },
      },
    ],
  },
});
