/**
 * `npm run db:generate [-- <target>]`: generates SQL migrations with drizzle-kit for the platform schema and every
 * service that has `db/schema.ts` (or only `<target>`). Each target gets its own folder and its own Postgres schema.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const only = process.argv[2];
const tmp = mkdtempSync(path.join(os.tmpdir(), 'drizzle-'));
try {
  for (const t of targets) {
    if (only && t.name !== only) continue;
    // drizzle-kit joins `out` and `schema` to its working directory (`./` + path), so both are given relative to
    // the repository root it runs in; absolute paths break its second run (ENOENT `.//work/...`).
    const relDir = path.relative(root, t.dir);
    const config = {
      dialect: 'postgresql',
      schema: `./${relDir}/schema.ts`,
      out: `./${relDir}/migrations`,
      schemaFilter: [t.schema],
      migrations: { schema: t.schema, table: '__drizzle_migrations' },
    };
    const ts = path.join(tmp, `${t.name}.config.ts`);
    writeFileSync(ts, `export default ${JSON.stringify(config)};\n`);
    console.log(`== ${t.name}`);
    execFileSync(path.join(root, 'node_modules/.bin/drizzle-kit'), ['generate', `--config=${ts}`], {
      stdio: 'inherit',
      cwd: root,
    });
    // The migrator creates the schema first (its journal table lives there), so the schema's own creation must
    // tolerate that.
    const out = path.join(t.dir, 'migrations');
    for (const file of readdirSync(out).filter((f) => f.endsWith('.sql'))) {
      const sqlText = readFileSync(path.join(out, file), 'utf8');
      const fixed = sqlText.replace(/CREATE SCHEMA "([^"]+)";/g, 'CREATE SCHEMA IF NOT EXISTS "$1";');
      if (fixed !== sqlText) writeFileSync(path.join(out, file), fixed);
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
