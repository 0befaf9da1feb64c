/**
 * The malformed requests that once answered 500, replayed exactly (issue "no 5xx from bad input"): NUL characters,
 * lone surrogates, integers past their column, numbers that parse to Infinity, dates PostgreSQL cannot store, deeply
 * nested JSON, non-canonical integers. Each must be a 4xx in the service's documented error body and change nothing.
 * The fuzz suite (fuzz.test.ts) looks for new ones; these keep the known ones fixed whatever its seed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import pg from 'pg';
import { implementedServices } from '../src/services/index.ts';
import { changedTables, dataFingerprint, schemasOf } from './support/fingerprint.ts';
import { errorBodySchemaOf, openApiOf } from './support/openapi.ts';
import { startTestPlatform } from './support/platform.ts';

/** A request; `$name` in the URL, a header value or the body is replaced by the seeded credential of that name. */
interface Probe {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** The status expected (default: any 4xx). */
  status?: number;
}

const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** Probes every service answers the same way (operator key routes, framework refusals). */
const common: Probe[] = [
  { method: 'POST', url: '/_ops/keys/99999999999999999999/revoke', headers: { authorization: '$operator' } },
  { method: 'POST', url: '/_ops/keys/1e309/revoke', headers: { authorization: '$operator' }, status: 400 },
  { method: 'POST', url: '/_ops/keys/Infinity/revoke', headers: { authorization: '$operator' }, status: 400 },
  { method: 'POST', url: '/_ops/keys/0x2/revoke', headers: { authorization: '$operator' }, status: 400 },
  { method: 'POST', url: '/_ops/keys/%00/revoke', headers: { authorization: '$operator' }, status: 400 },
  { method: 'GET', url: '/_ops/keys/%ZZ', headers: { authorization: '$operator' }, status: 400 },
  { method: 'POST', url: `/_ops/keys/${'9'.repeat(200)}/revoke`, headers: { authorization: '$operator' } },
  {
    method: 'POST',
    url: '/_ops/keys',
    headers: { authorization: '$operator' },
    body: '{"label":"a\\u0000b"}',
    status: 400,
  },
  {
    method: 'POST',
    url: '/_ops/keys',
    headers: { authorization: '$operator' },
    body: deep(5000),
    status: 400,
  },
];

/** The reproductions of each service (the issue's, and the fuzz's first finds). */
const probes: Record<string, Probe[]> = {
  payments: [
    { method: 'POST', url: '/v1/payment-intents/%00/card-payments', body: '{}', status: 400 },
    {
      url: '/v1/parties?page%5Bsize%5D=1e309',
      headers: { authorization: 'Bearer $merchantKey' },
      status: 400,
    },
    {
      url: '/v1/parties?page%5Bnumber%5D=Infinity',
      headers: { authorization: 'Bearer $merchantKey' },
      status: 400,
    },
    {
      method: 'POST',
      url: '/_ops/parties',
      headers: { authorization: '$operator' },
      body: '{"kind":"merchant","name":"x","perTransaction":1.7976931348623145e+308}',
      status: 400,
    },
  ],
  pricing: [
    {
      method: 'PATCH',
      url: '/api/v1/projects/demo/plans/1',
      headers: { authorization: 'Bearer $readWriteKey' },
      body: '{"name":"a\\u0000b"}',
      status: 400,
    },
    {
      method: 'PATCH',
      url: '/api/v1/projects/demo/plans/1',
      headers: { authorization: 'Bearer $readWriteKey' },
      body: '{"description":"a\\ud800b"}',
      status: 400,
    },
    { url: '/api/v1/projects/demo/plans/0x2', headers: { authorization: 'Bearer $readKey' }, status: 400 },
    { url: '/api/v1/projects/demo/plans/+2', headers: { authorization: 'Bearer $readKey' }, status: 400 },
    { url: '/api/v1/projects/demo/plans/1e3', headers: { authorization: 'Bearer $readKey' }, status: 400 },
    { url: '/api/v1/projects/demo/plans/1e309', headers: { authorization: 'Bearer $readKey' }, status: 400 },
  ],
  deposits: [
    { url: '/v1/stablecoin-gateway/deposit-addresses/%00', status: 400 },
    {
      method: 'POST',
      url: '/v1/stablecoin-gateway/deposit-addresses',
      body: `{"sourceChainId":2147483648,"amount":"1","recipient":"0x${'1'.repeat(40)}","depositor":"0x${'2'.repeat(40)}"}`,
      status: 400,
    },
  ],
  coins: [
    {
      method: 'PUT',
      url: '/_ops/coins/status',
      headers: { authorization: '$operator' },
      body: '{"ids":["bitcoin","a\\u0000b"],"status":"active"}',
      status: 400,
    },
    { url: '/api/v3/coins/list?x_coin_demo_api_key=%00', status: 400 },
  ],
  odds: [
    { url: '/api/v2/teams/2147483648', headers: { 'x-odds-key': '$apiKey' }, status: 400 },
    { url: '/api/v2/teams/1e309', headers: { 'x-odds-key': '$apiKey' }, status: 400 },
    { url: '/api/v2/lines/Infinity/history', headers: { 'x-odds-key': '$apiKey' }, status: 400 },
    { url: '/api/v2/sports/4/events/0000-01-01', headers: { 'x-odds-key': '$apiKey' }, status: 400 },
    { url: '/api/v2/sports/4/events/10000-01-01', headers: { 'x-odds-key': '$apiKey' }, status: 400 },
    {
      url: '/api/v2/markets/delta?last_id=99999999999999999999',
      headers: { 'x-odds-key': '$apiKey' },
      status: 400,
    },
    {
      method: 'POST',
      url: '/_ops/ingest',
      headers: { authorization: '$operator' },
      body: JSON.stringify({
        events: [
          {
            event_id: 'fuzz-1',
            sport_id: 4,
            event_date: '2026-11-24T20:00:00Z',
            teams: [
              { team_id: 1, name: 'A', is_away: true, is_home: false },
              { team_id: 2, name: 'B', is_away: false, is_home: true },
            ],
            markets: [
              {
                market_id: 1,
                participants: [
                  {
                    id: 1,
                    type: 'TYPE_TEAM',
                    name: 'A',
                    lines: [{ value: '', prices: { '19': { price: 2 ** 40 } } }],
                  },
                ],
              },
            ],
          },
        ],
      }),
      status: 400,
    },
  ],
  'entity-events': [
    { url: '/v2/webhooks/%00', headers: { api_key: '$apiKey' }, status: 400 },
    {
      url: '/v2/businesses/events/enrollments?offset=99999999999999999999',
      headers: { api_key: '$apiKey' },
      status: 400,
    },
    {
      method: 'POST',
      url: '/v2/businesses/events',
      headers: { api_key: '$apiKey' },
      body: '{"business_ids":["b1"],"from":"0000-01-01T00:00:00Z"}',
      status: 400,
    },
    {
      method: 'POST',
      url: '/_ops/events',
      headers: { authorization: '$operator' },
      body: `{"tenant_id":"$tenantId","events":[{"event_type":"x","entity_type":"business","business_id":"b","event_time":"2026-11-24T00:00:00Z","data":{"a":"\\ud800"}}]}`,
      status: 400,
    },
    {
      method: 'POST',
      url: '/_ops/events',
      headers: { authorization: '$operator' },
      body: `{"tenant_id":"$tenantId","events":[{"event_type":"x","entity_type":"business","business_id":"b","event_time":"2026-11-24T00:00:00Z","data":${deep(5000)}}]}`,
      status: 400,
    },
  ],
};

describe('malformed input: the known reproductions are 4xx in each service format, and change nothing', () => {
  for (const service of implementedServices) {
    test(`${service.name}`, async () => {
      const platform = await startTestPlatform({ services: [service] });
      const client = new pg.Client({ connectionString: platform.database.url });
      await client.connect();
      try {
        const app = platform.app(service.name);
        const doc = await openApiOf(platform, service.name);
        const ajv = new Ajv2020({ strict: false, allErrors: true });
        addFormats.default(ajv);
        const documented = ajv.compile(errorBodySchemaOf(doc));
        const values: Record<string, string> = {
          ...(platform.credentials(service.name) as Record<string, string>),
          operator: platform.operatorAuth,
        };
        const fill = (text: string) =>
          text.replace(/\$(\w+)/g, (_, name: string) => values[name] ?? `$${name}`);
        const before = await dataFingerprint(client, schemasOf(service.name), service.refusalCounters);
        for (const probe of [...common, ...(probes[service.name] ?? [])]) {
          const headers = Object.fromEntries(
            Object.entries(probe.headers ?? {}).map(([name, value]) => [name, fill(value)]),
          );
          if (probe.body !== undefined) headers['content-type'] = 'application/json';
          const res = await app.inject({
            method: probe.method ?? 'GET',
            url: fill(probe.url),
            headers,
            ...(probe.body !== undefined ? { payload: fill(probe.body) } : {}),
          });
          const what = `${probe.method ?? 'GET'} ${probe.url.slice(0, 80)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
          if (probe.status) assert.equal(res.statusCode, probe.status, what);
          else assert.ok(res.statusCode >= 400 && res.statusCode < 500, what);
          assert.ok(documented(res.json()), `${what}: ${ajv.errorsText(documented.errors)}`);
        }
        const after = await dataFingerprint(client, schemasOf(service.name), service.refusalCounters);
        assert.deepEqual(changedTables(before, after), [], 'a refused request wrote nothing');
      } finally {
        await client.end();
        await platform.close();
      }
    });
  }
});
