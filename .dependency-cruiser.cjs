/**
 * The layers of src/ and adapters/, checked by test/structure/layers.unit.test.ts (and by hand:
 * `npx depcruise src adapters`). CONTRIBUTING.md (Layout) says what each folder holds.
 *
 * Type-only imports count like any other (`tsPreCompilationDeps`): a type names the module it
 * comes from, and a cycle of types still ties modules that should stand alone.
 */

/**
 * What each folder of src/ may import besides itself, as patterns under src/. A folder missing
 * here fails the check until it is placed. The top-level files (index.ts, platform.ts,
 * options.ts, ...) compose the folders, so no folder imports them.
 */
const MAY_IMPORT = {
  // The neutral request and response, router, errors, envelope: everything stands on it.
  core: [],
  oauth: ['core/'],
  courier: ['core/'],
  history: ['core/'],
  metrics: ['core/'],
  // quota.history is part of the quota's options.
  quota: ['core/', 'history/'],
  // The sandbox is an upstream of the courier protocol: its signatures and operation names, nothing of the proxy.
  sandbox: ['core/', 'courier/(operations|signing)\\.ts$'],
  // The API document renders routes whoever described them; the scopes come from the OAuth server.
  openapi: ['core/', 'oauth/claims\\.ts$'],
  // The host's guard: the quota service, and its routes in the document's shape.
  guard: ['core/', 'quota/', 'openapi/document\\.ts$'],
  admin: ['core/', 'oauth/', 'quota/', 'history/'],
  cli: ['core/', 'oauth/', 'quota/', 'sandbox/'],
};

const folderRules = Object.entries(MAY_IMPORT).map(([folder, allowed]) => ({
  name: `${folder}-imports`,
  comment: `src/${folder}/ imports from src/ only ${allowed.length ? allowed.join(', ') : 'nothing outside it'} (.dependency-cruiser.cjs, MAY_IMPORT)`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: `^src/(?:${[`${folder}/`, ...allowed].join('|')})` },
}));

/** The host frameworks: the adapters translate them, src/ never names them (types included). */
const FRAMEWORKS = '(^|/)node_modules/((@types/)?(express|express4|koa|koa2|connect|fastify|fastify4|fastify-plugin|hono)|@(hono|koa|fastify|nestjs))/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle makes module initialisation order matter and ties modules that should stand alone',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-hosts',
      comment: 'src/ is the framework-neutral core: the adapters, examples, tests and benchmarks build on it, never the reverse',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(adapters|examples|test|bench)/' },
    },
    {
      name: 'src-no-framework',
      comment: 'src/ answers a neutral request; only adapters/ imports a host framework',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: FRAMEWORKS },
    },
    {
      name: 'src-no-node-http',
      comment: 'src/ answers a neutral request, not node:http objects; only the sandbox runs a server of its own',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/sandbox/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?(http|https|http2)$' },
    },
    ...folderRules,
    {
      name: 'src-folder-placed',
      comment: 'Each folder of src/ has its place in MAY_IMPORT (.dependency-cruiser.cjs) before it imports anything',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: `^src/(?:${Object.keys(MAY_IMPORT).join('|')})/` },
      to: {},
    },
    {
      name: 'adapters-run-only-the-platform',
      comment: 'An adapter only translates: at run time it reaches src/ through createPlatform (platform.ts), the options and core/',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: '^src/(platform\\.ts$|options\\.ts$|core/)', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'adapters-public-types',
      comment: 'Beyond that, an adapter names only types of the public API: the quota identity and the guard\'s verdict and route description',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^src/', pathNot: '^src/(platform\\.ts$|options\\.ts$|index\\.ts$|core/|quota/index\\.ts$|guard/)' },
    },
    {
      name: 'adapters-not-hosts',
      comment: 'The published adapters import nothing of the examples, tests or benchmarks',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^(examples|test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
  },
};
