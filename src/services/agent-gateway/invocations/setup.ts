/**
 * Part 2 of the gateway wired into the service (spec 002 section E: Endpoints and `/invoke/v1`): the endpoint, key
 * and invocation services, the invocation event feed, routes, jobs and the run observer.
 *
 * Settings (environment): `AGENT_GATEWAY_PUBLIC_URL` set makes `statusUrl` / `eventsUrl` absolute (relative
 * otherwise); `AGENT_GATEWAY_INVOKE_PER_MINUTE` (1-1,000,000, default 6,000) requests a minute per endpoint
 * credential; `AGENT_GATEWAY_SSE_HEARTBEAT_SECONDS` (1-300, default 15); `AGENT_GATEWAY_EVENT_RETENTION_SECONDS`
 * (60-2,592,000, default 86,400).
 */

import type { Tx } from '../../../platform/database.ts';
import { ConfigError } from '../../../platform/errors.ts';
import type { ServiceContext } from '../../../platform/service.ts';
import type { AgentService } from '../agents.ts';
import {
  createEndpointCredentialStore,
  EndpointKeyService,
  EndpointService,
  seedDemoEndpoint,
} from '../endpoints/index.ts';
import type { CredentialStore } from '../identity.ts';
import type { OrchestrationService } from '../orchestration.ts';
import type { RunEngine } from '../run-engine.ts';
import { createInvocationFeed } from './invocation-events.ts';
import {
  dispatchInvocationTask,
  drainDispatchesTask,
  invocationSweepTask,
  invocationTimeoutTask,
} from './invocation-jobs.ts';
import { InvocationService } from './invocations.ts';

function intVar(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  min: number,
  max: number,
  fallback: number,
) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not '${raw}'.`);
  return n;
}

/** The settings of part 2 from the environment. @throws ConfigError for a value out of range. */
export function readInvocationConfig(env: Readonly<Record<string, string | undefined>>) {
  return {
    invokePerMinute: intVar(env, 'AGENT_GATEWAY_INVOKE_PER_MINUTE', 1, 1_000_000, 6000),
    heartbeatSeconds: intVar(env, 'AGENT_GATEWAY_SSE_HEARTBEAT_SECONDS', 1, 300, 15),
    eventRetentionSeconds: intVar(env, 'AGENT_GATEWAY_EVENT_RETENTION_SECONDS', 60, 2_592_000, 86_400),
    absoluteUrls: Boolean(env.AGENT_GATEWAY_PUBLIC_URL),
  };
}

/** Builds part 2 on the service context and part 1's services. */
export function setupEndpointsAndInvocations(
  ctx: ServiceContext,
  deps: {
    keys: CredentialStore;
    agents: AgentService;
    orchestration: OrchestrationService;
    engine: RunEngine;
  },
) {
  const config = readInvocationConfig(ctx.config.env);
  const endpoints = new EndpointService(ctx.db, ctx.clock, deps.agents, deps.orchestration);
  const store = createEndpointCredentialStore(ctx);
  const keys = new EndpointKeyService(ctx.db, ctx.clock, store, deps.keys, endpoints);
  const invocations = new InvocationService(
    ctx.db,
    ctx.clock,
    endpoints,
    deps.orchestration,
    deps.engine,
    ctx.idempotency,
    {
      absoluteBase: config.absoluteUrls ? ctx.publicUrl : undefined,
      eventRetentionSeconds: config.eventRetentionSeconds,
    },
  );
  deps.engine.onFinished((tx, run) => invocations.onRunFinished(tx, run));
  deps.engine.onStatusChanged((tx, run) => invocations.onRunStatusChanged(tx, run));
  deps.engine.onEvents((tx, events, runs) => invocations.queueProgress(tx, events, runs));
  deps.engine.onFlushed((tx) => invocations.flushEvents(tx, true));
  const feed = createInvocationFeed(ctx.db, ctx.logger);
  let stopFeed: (() => Promise<void>) | undefined;
  const jobDeps = { invocations, logger: ctx.logger };
  return {
    db: ctx.db,
    endpoints,
    keys,
    invocations,
    feed,
    invokePerMinute: config.invokePerMinute,
    heartbeatMs: config.heartbeatSeconds * 1000,
    /** Seeds the demo endpoint in the seeded scope (credentials.json fields). */
    seed: (tx: Tx, scope: { tenant: string; namespace: string }) =>
      seedDemoEndpoint(tx, { agents: deps.agents, endpoints, keys }, scope),
    /** Starts following the invocation event feed (once per instance; the routes call it when the app is ready). */
    async startFeed() {
      stopFeed ??= await feed.start(ctx.notifier);
    },
    tasks: [
      dispatchInvocationTask.with(jobDeps),
      drainDispatchesTask.with(jobDeps),
      invocationTimeoutTask.with(jobDeps),
      invocationSweepTask.with(jobDeps),
    ],
    cron: [{ task: invocationSweepTask, pattern: '* * * * *' }],
    async stop() {
      await stopFeed?.();
      stopFeed = undefined;
    },
  };
}

/** Part 2's services and settings, as the routes take them. */
export type Part2 = ReturnType<typeof setupEndpointsAndInvocations>;
