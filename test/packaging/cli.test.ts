/**
 * `npx courier-platform …` from a packed install: the tarball `npm pack` makes, installed into a
 * project of its own, its bin run as a user would (docs/operator.md). Runs against dist/, which
 * `npm test` builds before vitest starts.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresOAuthStore } from '../../src/oauth/store/postgres.js';
import { verifyClientSecret } from '../../src/oauth/client-secret.js';
import { silentLogger } from '../../src/core/logger.js';
import { createQuotaService } from '../../src/quota/service.js';
import { createPostgresQuotaStore } from '../../src/quota/store/postgres.js';
import { call } from '../sandbox/helpers.js';
import { databaseUrl, describePostgres, uniqueName } from '../support/services.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pgVersion = (JSON.parse(readFileSync(join(root, 'node_modules/pg/package.json'), 'utf8')) as { version: string }).version;
let project: string;
let bin: string;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'cp-cli-'));
  // Scripts off: prepack would rebuild dist/ under the other test files.
  const tarball = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', project], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop()!;
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'cli-user', private: true }));
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', `./${tarball}`, `pg@${pgVersion}`], { cwd: project, stdio: 'pipe', timeout: 150_000 });
  bin = join(project, 'node_modules/.bin/courier-platform');
}, 180_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

function run(args: string[], options: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}) {
  const env = { ...process.env, DATABASE_URL: '', ...options.env };
  const result = spawnSync(bin, args, { cwd: project, input: options.input ?? '', encoding: 'utf8', env, timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('courier-platform (the bin of the packed package)', () => {
  it('--help lists the commands; an unknown command or flag exits 2 with one line and no stack', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    for (const command of ['hash-secret', 'migrate', 'sandbox']) expect(help.stdout).toContain(command);
    for (const command of ['hash-secret', 'migrate', 'sandbox']) expect(run([command, '--help']).stdout).toMatch(new RegExp(`^Usage: courier-platform ${command}`));

    const unknown = run(['hash-secrets']);
    expect([unknown.status, unknown.stderr]).toEqual([2, 'courier-platform: unknown command "hash-secrets"; the commands are hash-secret, migrate and sandbox (see --help)\n']);
    const flag = run(['migrate', '--prnt']);
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(/^courier-platform: migrate: Unknown option '--prnt'/);
    expect(flag.stderr).not.toMatch(/\n\s+at /);
  });

  it('an argument that is no option is refused without being repeated: it may be a password or a secret', () => {
    const url = run(['migrate', 'postgres://app:pw-never-printed@db.example/prod']);
    expect(url.status).toBe(2);
    expect(url.stderr).toMatch(/^courier-platform: migrate: takes options only/);
    const typed = run(['hash-secret', 'secret-never-printed'], { input: 'the piped secret' });
    expect([typed.status, typed.stdout]).toEqual([2, '']);
    for (const answer of [url, typed]) expect(`${answer.stdout}${answer.stderr}`).not.toMatch(/never-printed/);
  });

  it('migrate: a database URL pg cannot read is a usage error (exit 2) that never shows its password', () => {
    const bad = run(['migrate'], { env: { DATABASE_URL: 'postgres://app:pw-never-printed@127.0.0.1:99999/x' } });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^courier-platform: migrate: the database URL is not one pg can read: /);
    expect(bad.stderr).not.toMatch(/never-printed|unexpected failure/);
  });

  it('--version prints the installed package\'s version', () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const printed = run(['--version']);
    expect([printed.status, printed.stdout, printed.stderr]).toEqual([0, `${version}\n`, '']);
    expect(run(['-v']).stdout).toBe(`${version}\n`);
  });

  it('hash-secret: hashes the secret piped in (a trailing newline is not part of it); refuses a short one', async () => {
    const secret = 'p@ss $word with $1 signs';
    const hashed = run(['hash-secret'], { input: `${secret}\n` });
    expect(hashed.status, hashed.stderr).toBe(0);
    const hash = hashed.stdout.trim();
    expect(await verifyClientSecret(secret, hash)).toBe(true);
    expect(await verifyClientSecret(`${secret}\n`, hash)).toBe(false);

    const short = run(['hash-secret'], { input: 'short' });
    expect([short.status, short.stdout]).toEqual([2, '']);
    expect(short.stderr).toMatch(/at least 8 characters/);

    // 4096 characters at most; an endless stream piped by mistake ends the command at once.
    expect(run(['hash-secret'], { input: `${'s'.repeat(4096)}\n` }).status).toBe(0);
    const long = run(['hash-secret'], { input: 's'.repeat(4097) });
    expect([long.status, long.stdout, long.stderr]).toEqual([2, '', 'courier-platform: hash-secret: the input is longer than 4096 characters; pipe in the secret alone\n']);
    const endless = spawnSync('sh', ['-c', `yes a-secret-line | '${bin}' hash-secret`], { cwd: project, encoding: 'utf8', timeout: 20_000 });
    expect([endless.status, endless.stdout, endless.error]).toEqual([2, '', undefined]);
  });

  it('hash-secret: counts characters as code points, refuses input that is not UTF-8, drops a byte order mark', async () => {
    // 4096 emoji are 4096 characters (8192 UTF-16 units, 16384 bytes).
    const emoji = '😀'.repeat(4096);
    const many = run(['hash-secret'], { input: `${emoji}\r\n` });
    expect(many.status, many.stderr).toBe(0);
    expect(await verifyClientSecret(emoji, many.stdout.trim())).toBe(true);
    const tooMany = run(['hash-secret'], { input: `${emoji}😀` });
    expect([tooMany.status, tooMany.stdout, tooMany.stderr]).toEqual([2, '', 'courier-platform: hash-secret: the input is longer than 4096 characters; pipe in the secret alone\n']);

    // Latin-1 "café-secret": hashed as "caf\uFFFD-secret" if decoded leniently.
    const latin1 = run(['hash-secret'], { input: Buffer.from('café-secret', 'latin1') });
    expect([latin1.status, latin1.stdout, latin1.stderr]).toEqual([2, '', 'courier-platform: hash-secret: the input is not UTF-8 text; convert the secret to UTF-8 (e.g. with iconv) and pipe it in again\n']);
    const random = spawnSync('sh', ['-c', `head -c 64 /dev/urandom | '${bin}' hash-secret`], { cwd: project, encoding: 'utf8', timeout: 20_000 });
    expect([random.status, random.stdout]).toEqual([2, '']);

    // A file saved by Notepad starts with one; the client never sends it.
    const bom = run(['hash-secret'], { input: '\uFEFFsecret-from-notepad\r\n' });
    expect(bom.status, bom.stderr).toBe(0);
    expect(await verifyClientSecret('secret-from-notepad', bom.stdout.trim())).toBe(true);
  });

  it('migrate --print: the SQL of both stores, brute-force table and consume function included; a bad schema is refused', () => {
    const printed = run(['migrate', '--print', '--schema', 'tenant_a']);
    expect(printed.status).toBe(0);
    for (const part of ['"tenant_a".oauth_grants', '"tenant_a".oauth_failure_windows', '"tenant_a".oauth_used_once', '"tenant_a"."courier_quota_counter"', '"tenant_a"."courier_usage_history"', 'CREATE OR REPLACE FUNCTION']) {
      expect(printed.stdout).toContain(part);
    }
    const bad = run(['migrate', '--print', '--schema', 'Tenant; DROP']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--schema must match/);
    const nowhere = run(['migrate']);
    expect([nowhere.status, nowhere.stderr]).toEqual([2, 'courier-platform: migrate: set DATABASE_URL (or pass --database-url), or use --print for the SQL\n']);
  });

  it('sandbox: answers signed courier calls on the port it prints', async () => {
    const child: ChildProcess = spawn(bin, ['sandbox', '--port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 15_000);
        child.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = /listening on (http:\/\/\S+)/.exec(out);
          if (found) {
            clearTimeout(timer);
            resolve(found[1]!);
          }
        });
        child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
      });
      const answer = await call(url, 'get_express_type');
      expect(answer.code).toBe(0);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describePostgres('courier-platform migrate against PostgreSQL', () => {
  const schema = uniqueName('cli_migrate');
  const pool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: 2 }) : undefined;
  afterAll(async () => {
    if (!pool) return;
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('creates both stores\' tables (twice is harmless); the stores then run with migrate: false', async () => {
    for (let i = 0; i < 2; i++) {
      const migrated = run(['migrate', '--schema', schema], { env: { DATABASE_URL: databaseUrl } });
      expect(migrated.status, migrated.stderr).toBe(0);
    }
    const oauth = createPostgresOAuthStore({ pool: pool!, schema, migrate: false });
    await oauth.saveClient({ id: 'cli-client', name: 'CLI', redirectUris: ['https://app.example/cb'], scopes: ['openid'], grants: ['authorization_code'] });
    expect((await oauth.getClient('cli-client'))?.name).toBe('CLI');
    const quota = createQuotaService({ store: createPostgresQuotaStore({ pool: pool!, schema, migrate: false }), logger: silentLogger, onStoreError: 'closed' });
    expect((await quota.consume('cli-client', '/openapi/v1/ping')).outcome).toBe('admitted');
    expect((await pool!.query(`SELECT to_regclass('"${schema}".oauth_failure_windows') AS t`)).rows[0].t).not.toBeNull();
  });

  it('gives up on a lock another session holds, within its lock timeout, changing nothing; the application\'s queries do not queue behind it for longer', async () => {
    // A long reader of the grants (a report, a pg_dump): ALTER TABLE waits for it, and every query
    // of the application on the table would queue behind that wait for as long as it lasts.
    const reader = await pool!.connect();
    try {
      await reader.query('BEGIN');
      await reader.query(`SELECT count(*) FROM "${schema}".oauth_grants`);
      const started = Date.now();
      const blocked = run(['migrate', '--schema', schema], { env: { DATABASE_URL: databaseUrl } });
      expect(blocked.status).toBe(1);
      expect(blocked.stderr).toMatch(/^courier-platform: migrate: another session held a lock on schema \S+ or its tables for 10 s .*nothing was changed/);
      expect(Date.now() - started).toBeLessThan(20_000);
      // Nothing of the migration is left waiting in the server for the reader to end.
      const waiting = await pool!.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%courier-platform:migration:${schema}%'`);
      expect(waiting.rows[0].n).toBe(0);
    } finally {
      await reader.query('ROLLBACK');
      reader.release();
    }
    const again = run(['migrate', '--schema', schema], { env: { DATABASE_URL: databaseUrl } });
    expect(again.status, again.stderr).toBe(0);
  }, 60_000);

  it('answers an unreachable database with one line and exit 1', () => {
    const down = run(['migrate'], { env: { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } });
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(/^courier-platform: migrate: could not connect to the database: .*ECONNREFUSED/);
  });
});
