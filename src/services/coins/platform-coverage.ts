import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type CoverageCounts, coverage, type PlatformMap } from './platform-map.ts';
import { TOKEN_LIST_SOURCES } from './token-lists.ts';

const require = createRequire(import.meta.url);

/** The installed version of an npm package (its package.json, found upwards from its entry point). */
export function installedVersion(pkg: string): string {
  let dir = path.dirname(require.resolve(pkg));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (json.name === pkg && json.version) return json.version;
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`package.json of ${pkg} not found`);
    dir = up;
  }
}

const n = (v: number | undefined) => (v ?? 0).toLocaleString('en-US');
const pct = (part: number, whole: number) => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`);

function row(label: string, c: CoverageCounts & { entries?: number }): string {
  const u = c.unmatched;
  return [
    label,
    c.entries === undefined ? '' : n(c.entries),
    n(c.inScope),
    `${n(c.matched)} (${pct(c.matched, c.inScope)})`,
    n(c.matchedBy.reviewed),
    n(c.matchedBy.exception),
    n(c.matchedBy['listed-id']),
    n(c.matchedBy['symbol-name']),
    n(u['no-coin-with-symbol']),
    n(u['refused-by-review']),
    n((u['ambiguous-symbol'] ?? 0) + (u['name-differs'] ?? 0)),
    n((u['conflicts-with-reviewed'] ?? 0) + (u['conflicting-matches'] ?? 0) + (u['native-coin'] ?? 0)),
  ].join(' | ');
}

/**
 * The coverage table of the service README (between its `coverage` markers), as `scripts/coins-platform-coverage.ts`
 * prints it and a test recomputes it: per list (package and version) its entries, those in scope, matched (by
 * rule) and unmatched (by reason), then the distinct tokens.
 */
export function coverageMarkdown(map: PlatformMap): string {
  const c = coverage(map);
  const lines = [
    '| list | entries | in scope | matched | reviewed | exception | listed id | symbol + name | no coin with the symbol | refused by review | undecided (ambiguous, name differs) | conflicts, native coin |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const source of TOKEN_LIST_SOURCES)
    lines.push(
      `| ${row(`${source.name}: \`${source.package}\` ${installedVersion(source.package)} (${source.license})`, c.byList[source.name])} |`,
    );
  lines.push(`| ${row('distinct tokens (platform + address)', c.tokens)} |`);
  const out = Object.entries(c.outOfScope)
    .map(([reason, count]) => `${reason} ${n(count)}`)
    .join(', ');
  lines.push('', `Out of scope (not counted above): ${out || 'none'}.`);
  lines.push(
    `Coins created from the lists' CoinGecko ids: ${n(map.added.newCoins.length)}; coins given addresses by the lists: ${n(Object.keys(map.added.platforms).length)}.`,
  );
  return lines.join('\n');
}

/** Every token in scope that has no coin, with its reason (the script's `--unmatched`). */
export function unmatchedLines(map: PlatformMap): string[] {
  const lines: string[] = [];
  for (const o of map.outcomes)
    if (o.status === 'unmatched') {
      const names = [...new Set(o.token.entries.map((e) => `${e.symbol} "${e.name}" (${e.list})`))].join(
        ', ',
      );
      lines.push(`${o.reason}\t${o.token.platform}\t${o.token.address}\t${names}\t${o.detail}`);
    }
  return lines;
}
