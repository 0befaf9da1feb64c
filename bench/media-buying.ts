/**
 * `npm run bench -- media-buying`: an authenticated list request, `GET /api/v2/buyer/advertisers` with a user API key
 * (credential, owner and live membership resolved on every request), at 50 connections, against a bare Fastify
 * route answering the same bytes in the same run. Target (2-core machine): >= 2,000 req/s. Then the cost of one
 * password sign-in (argon2id, m=19 MiB, t=2, p=1), sequential, as milliseconds per sign-in. Then the text-message
 * command and inbound-to-queued-reply latency (`media-buying-texting.ts`). The worker runs (the inbound case needs it).
 *
 * Part 2 adds: a paged list of 100 rows (`GET /api/v2/buyer/human-feedback?take=100` over 150 seeded rows; target
 * >= 1,500 req/s) and a discover-products page of a kept session (`POST /api/v2/buyer/discovery/{id}/discover-products`;
 * target >= 500 req/s), each against a bare route answering the same bytes in the same run.
 *
 * Part 3 adds a stateless MCP `tools/call` of `get_products` (target >= 800 req/s) and the idempotent replay of
 * `create_media_buy` (target >= 1,500 req/s), each beside the SDK's ceiling (`media-buying-mcp.ts`).
 */
import type pg from 'pg';
import { ManualClock } from '../src/platform/clock.ts';
import { mediaBuyingService } from '../src/services/media-buying/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, load, report, settleStatistics } from './lib.ts';
import { benchMcp } from './media-buying-mcp.ts';
import { benchTexting } from './media-buying-texting.ts';

const SIGN_INS = 40;

export async function benchMediaBuying(durationSeconds: number): Promise<void> {
  const clock = new ManualClock(Date.UTC(2026, 10, 25));
  const platform = await startTestPlatform({
    services: [mediaBuyingService],
    clock,
    listen: true,
    runWorker: true,
    env: { MEDIA_BUYING_REQUESTS_PER_MINUTE: '1000000' },
  });
  try {
    const app = platform.app('media-buying');
    const { pool } = platform.booted.services.get('media-buying')!.ctx;
    await settleStatistics(pool);
    const demo = platform.credentials('media-buying') as { apiKey: string; email: string; password: string };
    const addr = app.server.address();
    if (!addr || typeof addr !== 'object') throw new Error('not listening');
    const path = '/api/v2/buyer/advertisers?take=20';
    const headers = { authorization: `Bearer ${demo.apiKey}` };
    const sample = await app.inject({ method: 'GET', url: path, headers });
    if (sample.statusCode !== 200)
      throw new Error(`GET advertisers failed: ${sample.statusCode} ${sample.body}`);
    const bare = await bareServer([
      { path: '/list', body: sample.body, headers: { 'content-type': 'application/json; charset=utf-8' } },
    ]);
    try {
      console.log(
        `# 50 connections, ${durationSeconds} s per run; ${sample.body.length} bytes; ` +
          'baseline = bare Fastify route answering the same JSON',
      );
      const baseline = await load('baseline: bare JSON route', `${bare.url}/list`, { durationSeconds });
      report(baseline);
      const result = await load(
        'media-buying: GET /api/v2/buyer/advertisers (user API key)',
        `http://127.0.0.1:${addr.port}${path}`,
        { durationSeconds, headers },
      );
      report(result, baseline);
    } finally {
      await bare.close();
    }

    await benchPart2(app, pool, addr.port, headers, durationSeconds);
    await benchMcp(addr.port, demo.apiKey, durationSeconds);

    const started = performance.now();
    for (let i = 0; i < SIGN_INS; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/auth/password',
        payload: { email: demo.email, password: demo.password },
      });
      if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`);
    }
    const perSignIn = (performance.now() - started) / SIGN_INS;
    console.log(
      `media-buying: POST /auth/password, ${SIGN_INS} sequential sign-ins: ${perSignIn.toFixed(1)} ms each ` +
        '(argon2id m=19456 KiB, t=2, p=1, plus the session insert)',
    );
    await benchTexting(platform, clock, durationSeconds);
  } finally {
    await platform.close();
  }
}

/** Part 2's cases: the paged list (take 100) and a discover-products page, each with its bare baseline. */
async function benchPart2(
  app: ReturnType<Awaited<ReturnType<typeof startTestPlatform>>['app']>,
  pool: pg.Pool,
  port: number,
  auth: Record<string, string>,
  durationSeconds: number,
): Promise<void> {
  const json = { ...auth, 'content-type': 'application/json' };
  for (let i = 0; i < 150; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v2/buyer/human-feedback',
      headers: json,
      payload: { rating: (i % 5) + 1, comment: `bench feedback ${i}` },
    });
    if (res.statusCode !== 201) throw new Error(`feedback failed: ${res.statusCode} ${res.body}`);
  }
  await settleStatistics(pool);
  const listPath = '/api/v2/buyer/human-feedback?take=100';
  const list = await app.inject({ method: 'GET', url: listPath, headers: auth });
  if (list.statusCode !== 200) throw new Error(`list failed: ${list.statusCode} ${list.body}`);
  const me = (
    await app.inject({ method: 'GET', url: '/api/v2/buyer/advertisers', headers: auth })
  ).json() as {
    data: { id: string }[];
  };
  const started = (
    await app.inject({
      method: 'POST',
      url: '/api/v2/buyer/discovery/new/discover-products',
      headers: json,
      payload: { advertiserId: me.data[0]!.id },
    })
  ).json() as { data: { discoveryId: string } };
  const discoverPath = `/api/v2/buyer/discovery/${started.data.discoveryId}/discover-products`;
  const discoverBody = JSON.stringify({ advertiserId: me.data[0]!.id, groupLimit: 10, productsPerGroup: 10 });
  const page = await app.inject({ method: 'POST', url: discoverPath, headers: json, payload: discoverBody });
  if (page.statusCode !== 200) throw new Error(`discover failed: ${page.statusCode} ${page.body}`);
  const bare = await bareServer([
    { path: '/list100', body: list.body, headers: { 'content-type': 'application/json; charset=utf-8' } },
    { path: '/discover', body: page.body, headers: { 'content-type': 'application/json; charset=utf-8' } },
  ]);
  try {
    console.log(`# paged list: ${list.body.length} bytes; discover-products: ${page.body.length} bytes`);
    const listBase = await load('baseline: bare JSON route (list bytes)', `${bare.url}/list100`, {
      durationSeconds,
    });
    report(listBase);
    report(
      await load(
        'media-buying: GET /api/v2/buyer/human-feedback?take=100',
        `http://127.0.0.1:${port}${listPath}`,
        {
          durationSeconds,
          headers: auth,
        },
      ),
      listBase,
    );
    const discoverBase = await load('baseline: bare JSON route (discovery bytes)', `${bare.url}/discover`, {
      durationSeconds,
    });
    report(discoverBase);
    report(
      await load(
        'media-buying: POST /api/v2/buyer/discovery/{id}/discover-products',
        `http://127.0.0.1:${port}${discoverPath}`,
        {
          durationSeconds,
          headers: json,
          method: 'POST',
          body: discoverBody,
        },
      ),
      discoverBase,
    );
  } finally {
    await bare.close();
  }
}
