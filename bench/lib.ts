import autocannon from 'autocannon';
import Fastify from 'fastify';
import type pg from 'pg';

/** Figures of one load run. Latencies in milliseconds. */
export interface LoadResult {
  label: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  bytesPerSecond: number;
}

/**
 * Runs autocannon against `url` with `connections` concurrent connections for `durationSeconds`, load generated in
 * a worker thread so it does not share the server's event loop.
 */
export async function load(
  label: string,
  url: string,
  options: {
    connections?: number;
    durationSeconds?: number;
    headers?: Record<string, string>;
    method?: 'GET' | 'POST';
    body?: string;
    requests?: autocannon.Request[];
  },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 50,
    duration: options.durationSeconds ?? 10,
    headers: options.headers,
    method: options.method ?? 'GET',
    body: options.body,
    requests: options.requests,
    workers: 1,
  });
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    bytesPerSecond: result.throughput.average,
  };
}

/** A bare Fastify server answering every GET of `path` with `body` and `headers`: the baseline of a ratio. */
export async function bareServer(
  routes: { path: string; body: Buffer | string; headers: Record<string, string> }[],
) {
  const app = Fastify({ logger: false });
  for (const r of routes) {
    app.get(r.path, async (_req, reply) => reply.headers(r.headers).send(r.body));
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('no address');
  return { url: `http://127.0.0.1:${addr.port}`, close: () => app.close() };
}

/** Prints a result line and, when given, the ratio to its baseline. */
export function report(result: LoadResult, baseline?: LoadResult): void {
  const ratio = baseline
    ? ` | ratio to baseline ${(result.requestsPerSecond / baseline.requestsPerSecond).toFixed(2)}`
    : '';
  const problems =
    result.errors || result.non2xx ? ` | errors ${result.errors}, non-2xx ${result.non2xx}` : '';
  console.log(
    `${result.label.padEnd(48)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s | p50 ${result.p50} ms | p99 ${result.p99} ms | ${(result.bytesPerSecond / 1e6).toFixed(1)} MB/s${ratio}${problems}`,
  );
}

/**
 * `ANALYZE`s the benchmark's database after its seeding: the planner statistics autovacuum would have gathered within
 * a minute of the inserts (its default naptime), so the load runs against plans of a settled database rather than of
 * tables the planner still believes empty (seen on the paged list: 0.35 ms per page with empty-table statistics,
 * 0.15 ms after `ANALYZE`).
 */
export async function settleStatistics(pool: pg.Pool): Promise<void> {
  await pool.query('analyze');
}
