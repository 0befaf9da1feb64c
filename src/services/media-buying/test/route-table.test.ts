/**
 * The README's route reference (issue 17: "The README lists every route with its permission and sandbox rule"): the
 * table between `<!-- routes:start -->` and `<!-- routes:end -->` is exactly what `routeTable` generates from the
 * routes the service registers (their guards, and the sandbox's policy table), and a route that declares no access
 * cannot be documented by accident. `UPDATE_DOCS=1 npm test -- route-table` rewrites the README's table.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { recordedRoutes, routeTable } from '../routes/route-table.ts';
import { type MediaBuyingHarness, startMediaBuying } from './support/harness.ts';

const README = path.resolve(import.meta.dirname, '..', 'README.md');
const START = '<!-- routes:start -->';
const END = '<!-- routes:end -->';

let h: MediaBuyingHarness;
before(async () => {
  h = await startMediaBuying();
});
after(async () => {
  await h.platform.close();
});

test('the README route table is the one generated from the registered routes', async () => {
  const table = routeTable(recordedRoutes(h.platform.app('media-buying')));
  const readme = await fs.readFile(README, 'utf8');
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  assert.ok(start !== -1 && end > start, 'README has the route table markers');
  const current = readme.slice(start + START.length, end).trim();
  if (process.env.UPDATE_DOCS === '1' && current !== table) {
    await fs.writeFile(README, `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`);
    return;
  }
  assert.equal(current, table, 'README route table is stale: run UPDATE_DOCS=1 npm test -- route-table');
});

test('every registered route is in the table, with its guard and the sandbox decision', () => {
  const entries = recordedRoutes(h.platform.app('media-buying'));
  const table = routeTable(entries);
  for (const entry of entries.filter((e) => e.method !== 'HEAD')) {
    const shown = entry.url.replace(/:([A-Za-z]+)/g, '{$1}');
    assert.ok(table.includes(`\`${shown}\``), `${entry.method} ${entry.url} is in the table`);
  }
  const row = (url: string) => table.split('\n').find((l) => l.includes(`| \`${url}\` |`)) ?? '';
  assert.match(row('/api/v2/buyer/human-feedback'), /\| GET, HEAD \| .* \| buyer read \| allowed \|/);
  assert.match(row('/api/v2/buyer/media-buys/{mediaBuyId}'), /buyer read \| TENANCY \|/);
  assert.match(row('/api/v2/storefront/storefronts/{storefrontId}/products'), /seller read \| TENANCY \|/);
  assert.match(row('/api/v2/buyer/activation'), /an agent registration credential \| allowed \|/);
  assert.match(row('/api/v2/org-api-keys'), /admin in an interactive session \| TENANCY \|/);
  assert.match(row('/mcp/v3'), /\| SPEND \|$/);
  assert.match(row('/_ops/text-lines'), /\| operator token \| {2}\|$/);
});

test('a route that declares no access and is not a known self-admitting route is refused', () => {
  assert.throws(
    () => routeTable([{ method: 'GET', url: '/api/v2/buyer/undocumented', access: undefined }]),
    /GET \/api\/v2\/buyer\/undocumented declares no access/,
  );
});
