import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type OddsHarness, startOdds } from './support.ts';

let h: OddsHarness;
before(async () => {
  h = await startOdds(new Date('2026-11-22T12:00:00Z'));
});
after(async () => h?.close());

test('OpenAPI 3.1: every odds route has operationId, tags and summary; the key scheme is X-Odds-Key', async () => {
  const res = await h.platform.app('odds').inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json();
  assert.equal(doc.openapi, '3.1.0');
  assert.deepEqual(doc.components.securitySchemes.oddsKey, {
    type: 'apiKey',
    in: 'header',
    name: 'X-Odds-Key',
    description: 'An odds API key (`odds_...`)',
  });
  const ops: string[] = [];
  for (const [path, methods] of Object.entries(
    doc.paths as Record<string, Record<string, Record<string, unknown>>>,
  )) {
    for (const [method, op] of Object.entries(methods)) {
      assert.ok(op.operationId, `${method} ${path} operationId`);
      assert.ok(Array.isArray(op.tags) && op.tags.length > 0, `${method} ${path} tags`);
      assert.ok(op.summary, `${method} ${path} summary`);
      ops.push(String(op.operationId));
    }
  }
  for (const id of [
    'getSportEventsByDate',
    'getEvent',
    'getEventOpeners',
    'getEventClosing',
    'getLineHistory',
    'getMarketsDelta',
    'getTeam',
    'listTeamPlayers',
    'getPlayer',
    'listSportTeams',
    'listSports',
    'listAffiliates',
    'listMarkets',
    'streamChanges',
    'opsIngestEvents',
  ])
    assert.ok(ops.includes(id), id);
});

test('the first start seeded the reference data and a pro key', async () => {
  const creds = h.platform.credentials('odds');
  assert.match(String(creds.apiKey), /^odds_[A-Za-z0-9_-]{43}$/);
  assert.equal(creds.apiKeyHeader, 'X-Odds-Key');
  assert.equal(creds.plan, 'pro');
  const teams = (await h.get('/api/v2/sports/2/teams')).json().teams;
  assert.equal(teams.length, 32);
  assert.equal((await h.get('/api/v2/sports/11/teams')).json().teams.length, 20);
});
