/**
 * Copies the AdCP JSON Schemas the media-buying MCP tests validate against (AdCP 3.x, Apache-2.0) from a git checkout
 * of `adcontextprotocol/adcp` into `test/fixtures/adcp-schemas/`: the request and response schemas of every tool the
 * service serves and every schema they reach through `$ref`, unchanged, with the licence and the source commit.
 *
 * Usage: `tsx scripts/vendor-adcp-schemas.ts <path of the adcp git dir> [commit]` (commit defaults to HEAD).
 * The tests read the copies only; nothing at runtime depends on them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [gitDir, commitArg] = process.argv.slice(2);
if (!gitDir) {
  console.error('usage: tsx scripts/vendor-adcp-schemas.ts <adcp git dir> [commit]');
  process.exit(2);
}
const git = (...args: string[]) =>
  execFileSync('git', ['-C', gitDir, ...args], { maxBuffer: 64 << 20 }).toString();
const commit = git('rev-parse', commitArg ?? 'HEAD').trim();
const SOURCE = 'static/schemas/source';
const OUT = join(import.meta.dirname, '..', 'test', 'fixtures', 'adcp-schemas');

/** The tools' request and response schemas (paths under `static/schemas/source`). */
const ROOTS = [
  'core/error.json',
  'protocol/get-adcp-capabilities',
  'media-buy/get-products',
  'media-buy/create-media-buy',
  'media-buy/update-media-buy',
  'media-buy/get-media-buys',
  'media-buy/get-media-buy-delivery',
  'media-buy/list-creative-formats',
  'creative/sync-creatives',
  'creative/list-creatives',
  'account/sync-accounts',
  'account/list-accounts',
].flatMap((r) => (r.endsWith('.json') ? [r] : [`${r}-request.json`, `${r}-response.json`]));

const seen = new Set<string>();
const queue = [...ROOTS];
rmSync(OUT, { recursive: true, force: true });
while (queue.length > 0) {
  const rel = queue.shift()!;
  if (seen.has(rel)) continue;
  seen.add(rel);
  const text = git('show', `${commit}:${SOURCE}/${rel}`);
  mkdirSync(dirname(join(OUT, rel)), { recursive: true });
  writeFileSync(join(OUT, rel), text);
  for (const m of text.matchAll(/"\$ref"\s*:\s*"([^"#]+)(#[^"]*)?"/g)) {
    const ref = m[1]!;
    const target = ref.startsWith('/schemas/')
      ? ref.slice('/schemas/'.length)
      : join(dirname(rel), ref).replace(/\\/g, '/');
    queue.push(target);
  }
}
writeFileSync(join(OUT, 'LICENSE'), git('show', `${commit}:LICENSE`));
writeFileSync(
  join(OUT, 'SOURCE.md'),
  `# AdCP JSON Schemas (test fixtures)\n\nCopied unchanged by \`scripts/vendor-adcp-schemas.ts\` from ` +
    `[adcontextprotocol/adcp](https://github.com/adcontextprotocol/adcp) at commit \`${commit}\`, ` +
    `\`${SOURCE}/\`, under the Apache License 2.0 (\`LICENSE\` here). ${seen.size} schemas: the request and ` +
    'response schemas of the tools the media-buying MCP endpoints serve and every schema they reach through `$ref`. ' +
    'Their `$id`s are `/schemas/<path>`; the tests load them all into one Ajv instance.\n',
);
console.log(`${seen.size} schemas from ${commit} -> ${OUT}`);
