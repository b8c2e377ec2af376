import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The examples import the package by name (as users do); tsconfig.json maps it to the sources.
  resolve: { tsconfigPaths: true },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 15_000,
    hookTimeout: 30_000,
  },
});
