/**
 * `npm run db:generate [-- <target>]`: generates SQL migrations with drizzle-kit for the platform schema and every
 * service that has `db/schema.ts` (or only `<target>`). Each target gets its own folder and its own Postgres schema.
 *
 * `npm run db:check` (`--check`): the drift check of CI. drizzle-kit generates into a copy of each committed
 * migrations folder; any file it adds or changes means a `schema.ts` and its committed migrations disagree, and the
 * command exits 1 naming them (nothing in the repository is written).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const targets: { name: string; schema: string; dir: string }[] = [
  { name: 'platform', schema: 'platform', dir: path.join(root, 'src/platform/db') },
];
for (const service of readdirSync(path.join(root, 'src/services'))) {
  const dir = path.join(root, 'src/services', service, 'db');
  if (existsSync(path.join(dir, 'schema.ts')))
    targets.push({ name: service, schema: service.replace(/-/g, '_'), dir });
}
const args = process.argv.slice(2);
const check = args.includes('--check');
const only = args.find((a) => !a.startsWith('--'));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'drizzle-'));

/** Every file under `dir` (relative path -> content). */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else files.set(rel, readFileSync(path.join(dir, rel), 'utf8'));
    }
  };
  walk('');
  return files;
}

/** Runs drizzle-kit generate for `t` with its migrations in `out` (relative to the repository root). */
function generate(t: (typeof targets)[number], out: string): void {
  // drizzle-kit joins `out` and `schema` to its working directory (`./` + path), so both are given relative to
  // the repository root it runs in; absolute paths break its second run (ENOENT `.//work/...`).
  const config = {
    dialect: 'postgresql',
    schema: `./${path.relative(root, t.dir)}/schema.ts`,
    out: `./${out}`,
    schemaFilter: [t.schema],
    migrations: { schema: t.schema, table: '__drizzle_migrations' },
  };
  const ts = path.join(tmp, `${t.name}.config.ts`);
  writeFileSync(ts, `export default ${JSON.stringify(config)};\n`);
  execFileSync(path.join(root, 'node_modules/.bin/drizzle-kit'), ['generate', `--config=${ts}`], {
    stdio: check ? 'pipe' : 'inherit',
    cwd: root,
  });
  // The migrator creates the schema first (its journal table lives there), so the schema's own creation must
  // tolerate that.
  const dir = path.join(root, out);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const sqlText = readFileSync(path.join(dir, file), 'utf8');
    const fixed = sqlText.replace(/CREATE SCHEMA "([^"]+)";/g, 'CREATE SCHEMA IF NOT EXISTS "$1";');
    if (fixed !== sqlText) writeFileSync(path.join(dir, file), fixed);
  }
}

const drift: string[] = [];
try {
  for (const t of targets) {
    if (only && t.name !== only) continue;
    const committed = path.join(t.dir, 'migrations');
    if (!check) {
      console.log(`== ${t.name}`);
      generate(t, path.relative(root, committed));
      continue;
    }
    // The copy lives inside the repository (drizzle-kit resolves `out` from its working directory).
    const copy = mkdtempSync(path.join(root, 'node_modules', '.db-check-'));
    try {
      cpSync(committed, copy, { recursive: true });
      generate(t, path.relative(root, copy));
      const before = snapshot(committed);
      const after = snapshot(copy);
      for (const [file, content] of after) {
        if (before.get(file) !== content)
          drift.push(`${t.name}: ${before.has(file) ? 'changed' : 'new'} ${file}`);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (check) {
  if (drift.length > 0) {
    console.error(
      `Committed migrations differ from the schemas (run npm run db:generate and commit):\n  ${drift.join('\n  ')}`,
    );
    process.exit(1);
  }
  console.log(`migrations match the schemas (${only ?? `${targets.length} targets`})`);
}
