/**
 * The tables of Endpoints and invocations (spec 002 section E, "E. Bodies", "E. Invocation", "E. Event streams"):
 * endpoints with their draft settings, immutable releases, the endpoint's history of moves, endpoint credentials
 * (endpoint API keys and platform bearer tokens), conversations, invocations and their append-only event log.
 */
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgSchema, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { expiringCredentialColumns } from '../../../platform/db/columns.ts';

/** The gateway's schema (the same `agent_gateway` as schema.ts; declared here so the two modules import nothing of each other). */
const agentGatewaySchema = pgSchema('agent_gateway');

const ts = (name: string) => timestamp(name, { withTimezone: true });

/** What a release freezes (and what a draft holds): see endpoints/endpoint-settings.ts. */
export interface EndpointSettingsRecord {
  invocationMode: 'job' | 'conversation';
  targetType: 'agent' | 'team' | 'orchestration_revision';
  targetId: string;
  /** The workflow revision of an `orchestration_revision` target (null for agents and teams). */
  targetRevision: number | null;
  inputSchema: Record<string, unknown> | boolean;
  outputSchema: Record<string, unknown> | boolean;
  authPolicy: { type: 'api_key' | 'platform' };
  timeoutSeconds: number;
  maxPayloadBytes: number;
}

/** Endpoints: a slug unique in its scope, its draft settings and the release it points at (null: never published). */
export const endpoints = agentGatewaySchema.table(
  'endpoints',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    slug: text('slug').notNull(),
    status: text('status').$type<'draft' | 'published' | 'disabled'>().notNull(),
    version: integer('version').notNull(),
    draft: jsonb('draft').$type<EndpointSettingsRecord>().notNull(),
    currentReleaseId: text('current_release_id'),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('endpoints_scope_slug_idx').on(t.tenantId, t.namespaceId, t.slug)],
);

/** Immutable releases of an endpoint, numbered 1, 2, ... per endpoint. */
export const endpointReleases = agentGatewaySchema.table(
  'endpoint_releases',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => endpoints.id),
    number: integer('number').notNull(),
    settings: jsonb('settings').$type<EndpointSettingsRecord>().notNull(),
    publishedBy: text('published_by'),
    publishedAt: ts('published_at').notNull(),
  },
  (t) => [uniqueIndex('endpoint_releases_number_idx').on(t.endpointId, t.number)],
);

/** Every move of an endpoint (created, published, rolled back, disabled, enabled), oldest first by id. */
export const endpointHistory = agentGatewaySchema.table(
  'endpoint_history',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => endpoints.id),
    action: text('action')
      .$type<'created' | 'published' | 'rolled_back' | 'disabled' | 'enabled'>()
      .notNull(),
    releaseId: text('release_id'),
    userId: text('user_id'),
    at: ts('at').notNull(),
  },
  (t) => [index('endpoint_history_endpoint_idx').on(t.endpointId, t.id)],
);

/**
 * Endpoint credentials (platform credential kit): endpoint API keys (`agk_`, bound to one endpoint) and platform
 * bearer tokens (`agp_`, bound to a scope). `rotatedFrom` links a key to the one it replaced.
 */
export const endpointCredentials = agentGatewaySchema.table(
  'endpoint_credentials',
  {
    ...expiringCredentialColumns(),
    kind: text('kind').$type<'endpoint_key' | 'platform_token'>().notNull(),
    endpointId: text('endpoint_id').references(() => endpoints.id),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    createdBy: text('created_by'),
    rotatedFrom: bigint('rotated_from', { mode: 'number' }),
  },
  (t) => [index('endpoint_credentials_endpoint_idx').on(t.endpointId)],
);

/** Conversations started on a conversation-mode endpoint. */
export const endpointConversations = agentGatewaySchema.table('endpoint_conversations', {
  id: text('id').primaryKey(),
  endpointId: text('endpoint_id')
    .notNull()
    .references(() => endpoints.id),
  turnCount: integer('turn_count').notNull(),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

/** The invocation states of spec E "E. Invocation", plus `cancel_requested` (anchor). */
export type InvocationStatus =
  | 'accepted'
  | 'dispatching'
  | 'running'
  | 'waiting'
  | 'cancel_requested'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'timed_out';

/** Invocations: a job, or one turn of a conversation. */
export const invocations = agentGatewaySchema.table(
  'invocations',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => endpoints.id),
    releaseId: text('release_id')
      .notNull()
      .references(() => endpointReleases.id),
    kind: text('kind').$type<'job' | 'turn'>().notNull(),
    conversationId: text('conversation_id'),
    turn: integer('turn'),
    title: text('title'),
    description: text('description'),
    input: jsonb('input').notNull(),
    status: text('status').$type<InvocationStatus>().notNull(),
    result: jsonb('result'),
    error: jsonb('error').$type<{ code: string; message: string; details?: unknown }>(),
    runId: text('run_id'),
    deadlineAt: ts('deadline_at').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
    finishedAt: ts('finished_at'),
    eventsPrunedThrough: bigint('events_pruned_through', { mode: 'number' }).notNull().default(0),
    /** Every move: `[{status, at, reason?}]`, oldest first. */
    history: jsonb('history').$type<{ status: InvocationStatus; at: string; reason?: string }[]>().notNull(),
  },
  (t) => [
    index('invocations_run_idx').on(t.runId),
    index('invocations_status_deadline_idx').on(t.status, t.deadlineAt),
    index('invocations_conversation_idx').on(t.conversationId, t.turn),
    // The retention prune's read: finished invocations whose events are still kept, oldest end first.
    index('invocations_prune_idx')
      .on(t.finishedAt)
      .where(sql`${t.eventsPrunedThrough} = 0 and ${t.finishedAt} is not null`),
    // The dispatch drain's read (invocations.ts, `drainDispatches`): accepted jobs, oldest first.
    index('invocations_accepted_jobs_idx')
      .on(t.createdAt, t.id)
      .where(sql`${t.status} = 'accepted' and ${t.kind} = 'job'`),
  ],
);

/** The append-only event log of invocations (ids committed in order under an advisory lock: a change feed). */
export const invocationEvents = agentGatewaySchema.table(
  'invocation_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    invocationId: text('invocation_id').notNull(),
    conversationId: text('conversation_id'),
    type: text('type').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    index('invocation_events_invocation_idx').on(t.invocationId, t.id),
    index('invocation_events_conversation_idx').on(t.conversationId, t.id),
  ],
);
