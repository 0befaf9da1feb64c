/**
 * `npm test`: runs every test file (`src/**\/test/*.test.ts`, `test/*.test.ts`) with node's test runner.
 *
 * Database: `TEST_DATABASE_URL` when set (any PostgreSQL >= 14 the tests may create databases on); otherwise one
 * embedded PostgreSQL started here in a temporary directory, shared by all files (each file creates its own
 * database), and stopped at the end. Arguments narrow the run to files whose path contains one of them.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../src/platform/embedded-postgres.ts';

const root = path.resolve(import.meta.dirname, '..');

function collect(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) collect(full, out);
    else if (entry.endsWith('.test.ts')) out.push(path.relative(root, full));
  }
}

const files: string[] = [];
collect(path.join(root, 'src'), files);
collect(path.join(root, 'test'), files);
const filters = process.argv.slice(2);
const selected = files.sort().filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

let stopDb: (() => Promise<void>) | undefined;
const env = { ...process.env };
if (!env.TEST_DATABASE_URL) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'api-suite-testdb-'));
  const pg = await startEmbeddedPostgres(dir);
  env.TEST_DATABASE_URL = pg.url;
  console.log(`# embedded PostgreSQL for tests on 127.0.0.1:${pg.port}`);
  stopDb = async () => {
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  };
} else {
  console.log('# tests use TEST_DATABASE_URL');
}

const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...selected], {
  cwd: root,
  env,
  stdio: 'inherit',
});
const forward = (signal: NodeJS.Signals) => child.kill(signal);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
const code: number = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
await stopDb?.();
process.exit(code);
