/**
 * `npm run bench -- media-buying`: an authenticated list request, `GET /api/v2/buyer/advertisers` with a user API key
 * (credential, owner and live membership resolved on every request), at 50 connections, against a bare Fastify
 * route answering the same bytes in the same run. Target (2-core machine): >= 2,000 req/s. Then the cost of one
 * password sign-in (argon2id, m=19 MiB, t=2, p=1), sequential, as milliseconds per sign-in. Then the text-message
 * command and inbound-to-queued-reply latency (`media-buying-texting.ts`). The worker runs (the inbound case needs it).
 */
import { ManualClock } from '../src/platform/clock.ts';
import { mediaBuyingService } from '../src/services/media-buying/index.ts';
import { startTestPlatform } from '../test/support/platform.ts';
import { bareServer, load, report } from './lib.ts';
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
