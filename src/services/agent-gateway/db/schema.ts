import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { expiringCredentialColumns } from '../../../platform/db/columns.ts';

/**
 * The tables of the agent-orchestration gateway (schema `agent_gateway`, spec 002 section E). Ids are
 * `<prefix>_` + 32 hex (`agt_`, `cht_`, `run_`, ...) except tenants and namespaces, whose ids are chosen by the
 * operator (`demo`, `default`); instants are `timestamptz`; free JSON (definitions, graphs, run data) is `jsonb`.
 */
export const agentGatewaySchema = pgSchema('agent_gateway');

const ts = (name: string) => timestamp(name, { withTimezone: true });

/** Tenants (operator-created). `id` is the value of `X-Platform-Tenant`. */
export const tenants = agentGatewaySchema.table('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull(),
});

/** Namespaces of a tenant. `id` is the value of `X-Platform-Namespace`, unique within the tenant. */
export const namespaces = agentGatewaySchema.table(
  'namespaces',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    id: text('id').notNull(),
    name: text('name').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

/** People who sign in (operator-created); `password_hash` is argon2id (PHC string). */
export const users = agentGatewaySchema.table('users', {
  id: text('id').primaryKey(),
  username: text('username').notNull().unique(),
  displayName: text('display_name').notNull(),
  passwordHash: text('password_hash').notNull(),
  createdAt: ts('created_at').notNull(),
  /** Set while the operator has disabled the user: no sign-in, every session token revoked. */
  disabledAt: ts('disabled_at'),
});

/** A user's role in a scope: `namespace_id` `*` covers every namespace of the tenant. */
export const roleBindings = agentGatewaySchema.table(
  'role_bindings',
  {
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    namespaceId: text('namespace_id').notNull(),
    role: text('role').$type<'viewer' | 'editor' | 'admin'>().notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.tenantId, t.namespaceId] })],
);

/** Execution environments of a scope, where remote runtime hosts claim work. */
export const environments = agentGatewaySchema.table('environments', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  namespaceId: text('namespace_id').notNull(),
  name: text('name').notNull(),
  createdAt: ts('created_at').notNull(),
});

/**
 * Every credential of the gateway (the platform credential kit), one table, told apart by `kind` and prefix:
 * `session` (`ags_`, a user's bearer token from login, expiring), `host` (`agh_`, a runtime host), `environment`
 * (`age_`, `X-Builder-Environment-Key`), `attempt` (`aga_`, one claimed execution attempt) and `internal` (`agi_`,
 * trusted components).
 */
export const credentials = agentGatewaySchema.table(
  'credentials',
  {
    ...expiringCredentialColumns(),
    kind: text('kind').$type<'session' | 'host' | 'environment' | 'attempt' | 'internal'>().notNull(),
    userId: text('user_id'),
    environmentId: text('environment_id'),
    executionId: text('execution_id'),
    sessionId: text('session_id'),
  },
  (t) => [index('credentials_user_idx').on(t.userId)],
);

/** Registered runtime hosts (one per host credential) and their heartbeat lease. */
export const hosts = agentGatewaySchema.table('hosts', {
  id: text('id').primaryKey(),
  environmentId: text('environment_id').notNull(),
  credentialId: bigint('credential_id', { mode: 'number' }).notNull().unique(),
  name: text('name').notNull(),
  capabilities: jsonb('capabilities').$type<string[]>().notNull(),
  registeredAt: ts('registered_at').notNull(),
  lastHeartbeatAt: ts('last_heartbeat_at').notNull(),
  leaseExpiresAt: ts('lease_expires_at').notNull(),
});

/** Agents of a scope; `definition` is the current version's (kind-specific, runtime/agents.ts). */
export const agents = agentGatewaySchema.table(
  'agents',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    kind: text('kind').notNull(),
    conversational: boolean('conversational').notNull(),
    definition: jsonb('definition').$type<Record<string, unknown>>().notNull(),
    version: integer('version').notNull(),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('agents_scope_idx').on(t.tenantId, t.namespaceId, t.createdAt)],
);

/** Every version of every agent definition (immutable history). */
export const agentVersions = agentGatewaySchema.table(
  'agent_versions',
  {
    agentId: text('agent_id')
      .notNull()
      .references(() => agents.id),
    version: integer('version').notNull(),
    kind: text('kind').notNull(),
    conversational: boolean('conversational').notNull(),
    definition: jsonb('definition').$type<Record<string, unknown>>().notNull(),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.version] })],
);

/** Chats: one user's conversation with one conversation-capable agent. */
export const chats = agentGatewaySchema.table(
  'chats',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    ownerId: text('owner_id').notNull(),
    agentId: text('agent_id').notNull(),
    title: text('title').notNull(),
    archived: boolean('archived').notNull(),
    version: integer('version').notNull(),
    turnCount: integer('turn_count').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('chats_owner_idx').on(t.tenantId, t.namespaceId, t.ownerId, t.createdAt)],
);

/** The turns of a chat: the user's message and the agent's reply (null while a remote host works on it). */
export const chatTurns = agentGatewaySchema.table(
  'chat_turns',
  {
    id: text('id').primaryKey(),
    chatId: text('chat_id').notNull(),
    seq: integer('seq').notNull(),
    message: text('message').notNull(),
    status: text('status').$type<'completed' | 'failed' | 'pending'>().notNull(),
    reply: jsonb('reply').$type<{ text: string; data?: unknown }>(),
    error: jsonb('error').$type<{ code: string; message: string }>(),
    agentVersion: integer('agent_version').notNull(),
    createdAt: ts('created_at').notNull(),
    completedAt: ts('completed_at'),
  },
  (t) => [uniqueIndex('chat_turns_seq_idx').on(t.chatId, t.seq)],
);

/** Teams: an ordered list of member agents that hand work on, one to the next. */
export const teams = agentGatewaySchema.table('teams', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  namespaceId: text('namespace_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull(),
  members: jsonb('members').$type<string[]>().notNull(),
  version: integer('version').notNull(),
  createdBy: text('created_by'),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

/** Orchestration (workflow) definitions: a draft graph with a version, and the number of its latest revision. */
export const definitions = agentGatewaySchema.table('orchestration_definitions', {
  id: text('id').primaryKey(),
  tenantId: text('tenant_id').notNull(),
  namespaceId: text('namespace_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull(),
  graph: jsonb('graph').$type<Record<string, unknown>>().notNull(),
  version: integer('version').notNull(),
  publishedRevision: integer('published_revision'),
  createdBy: text('created_by'),
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
});

/** Immutable published revisions of a definition. */
export const revisions = agentGatewaySchema.table(
  'orchestration_revisions',
  {
    id: text('id').primaryKey(),
    definitionId: text('definition_id').notNull(),
    revision: integer('revision').notNull(),
    graph: jsonb('graph').$type<Record<string, unknown>>().notNull(),
    publishedBy: text('published_by'),
    publishedAt: ts('published_at').notNull(),
  },
  (t) => [uniqueIndex('revisions_number_idx').on(t.definitionId, t.revision)],
);

/**
 * Runs of an agent, a team or a workflow revision. `graph` is the graph executed (a copy of the revision's; a
 * one-node graph for an agent or team); `data` is `{input, nodes: {<node id>: output}}`, what conditions read.
 */
export const runs = agentGatewaySchema.table(
  'runs',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    targetType: text('target_type').$type<'agent' | 'team' | 'orchestration'>().notNull(),
    targetId: text('target_id').notNull(),
    revision: integer('revision'),
    graph: jsonb('graph').$type<Record<string, unknown>>().notNull(),
    status: text('status')
      .$type<'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled'>()
      .notNull(),
    input: jsonb('input'),
    data: jsonb('data').$type<{ input: unknown; nodes: Record<string, unknown> }>().notNull(),
    output: jsonb('output'),
    error: jsonb('error').$type<{ code: string; message: string }>(),
    parentRunId: text('parent_run_id'),
    parentStepId: text('parent_step_id'),
    issueId: text('issue_id'),
    automationId: text('automation_id'),
    /** The endpoint invocation the run executes (part 2), inherited by its sub-runs. */
    invocationId: text('invocation_id'),
    /** That invocation's conversation (a turn's), so its conversation stream carries the run's progress. */
    invocationConversationId: text('invocation_conversation_id'),
    triggerDepth: integer('trigger_depth').notNull(),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('runs_scope_idx').on(t.tenantId, t.namespaceId, t.createdAt)],
);

/** The steps of a run: one per node reached (team members as `<node>#<index>`), with their claim and outcome. */
export const steps = agentGatewaySchema.table(
  'run_steps',
  {
    id: text('id').primaryKey(),
    runId: text('run_id').notNull(),
    nodeId: text('node_id').notNull(),
    nodeType: text('node_type').notNull(),
    parentStepId: text('parent_step_id'),
    status: text('status')
      .$type<'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled'>()
      .notNull(),
    attempt: integer('attempt').notNull(),
    input: jsonb('input'),
    output: jsonb('output'),
    error: jsonb('error').$type<{ code: string; message: string }>(),
    arrivals: jsonb('arrivals').$type<Record<string, 'live' | 'skip'>>().notNull(),
    wait: jsonb('wait').$type<Record<string, unknown>>(),
    dueAt: ts('due_at'),
    claimedAt: ts('claimed_at'),
    createdAt: ts('created_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    uniqueIndex('run_steps_node_idx').on(t.runId, t.nodeId),
    index('run_steps_status_idx').on(t.status, t.dueAt),
  ],
);

/** Signals sent to a run; a signal node consumes the first unconsumed one of its name. */
export const signals = agentGatewaySchema.table(
  'run_signals',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: text('run_id').notNull(),
    name: text('name').notNull(),
    payload: jsonb('payload'),
    consumedByStep: text('consumed_by_step'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('run_signals_run_idx').on(t.runId, t.name)],
);

/**
 * Run events: append-only, `id` monotonic and committed in id order (writers hold the `agent_gateway:events`
 * advisory lock), so the platform's ChangeFeed can stream them (part 2's SSE).
 */
export const runEvents = agentGatewaySchema.table(
  'run_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: text('run_id').notNull(),
    stepId: text('step_id'),
    nodeId: text('node_id'),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('run_events_run_idx').on(t.runId, t.id)],
);

/** Approval requests of approval nodes, decided with `POST /approvals/{id}/decide`. */
export const approvals = agentGatewaySchema.table(
  'approvals',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    runId: text('run_id').notNull(),
    stepId: text('step_id').notNull(),
    title: text('title').notNull(),
    status: text('status').$type<'pending' | 'approved' | 'rejected' | 'cancelled'>().notNull(),
    decidedBy: text('decided_by'),
    comment: text('comment'),
    createdAt: ts('created_at').notNull(),
    decidedAt: ts('decided_at'),
  },
  (t) => [index('approvals_scope_idx').on(t.tenantId, t.namespaceId, t.status)],
);

/** Issues: work items, optionally assigned to an agent or a team that works them in a run. */
export const issues = agentGatewaySchema.table(
  'issues',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    title: text('title').notNull(),
    description: text('description').notNull(),
    status: text('status').$type<'open' | 'in_progress' | 'in_review' | 'done' | 'blocked'>().notNull(),
    assigneeType: text('assignee_type').$type<'agent' | 'team'>(),
    assigneeId: text('assignee_id'),
    version: integer('version').notNull(),
    result: jsonb('result'),
    currentRunId: text('current_run_id'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('issues_scope_idx').on(t.tenantId, t.namespaceId, t.createdAt)],
);

/** Comments of an issue, including decisions (`acceptance`, `rejection` with its reason) and system notes. */
export const issueComments = agentGatewaySchema.table(
  'issue_comments',
  {
    id: text('id').primaryKey(),
    issueId: text('issue_id').notNull(),
    kind: text('kind').$type<'comment' | 'acceptance' | 'rejection' | 'system'>().notNull(),
    authorType: text('author_type').$type<'user' | 'agent' | 'system'>().notNull(),
    authorId: text('author_id'),
    body: text('body').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('issue_comments_issue_idx').on(t.issueId, t.createdAt)],
);

/** Automations: a trigger (cron schedule or event) that starts a run of a target. */
export const automations = agentGatewaySchema.table(
  'automations',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    name: text('name').notNull(),
    enabled: boolean('enabled').notNull(),
    trigger: jsonb('trigger').$type<Record<string, unknown>>().notNull(),
    target: jsonb('target').$type<Record<string, unknown>>().notNull(),
    input: jsonb('input'),
    nextFireAt: ts('next_fire_at'),
    lastFiredAt: ts('last_fired_at'),
    fireCount: integer('fire_count').notNull(),
    version: integer('version').notNull(),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [index('automations_due_idx').on(t.enabled, t.nextFireAt)],
);

/**
 * Executions of remote agents, claimed by runtime hosts: `session_id` names the current attempt's session
 * (`/api/sessions/{id}`); a claim whose host stopped heartbeating can be taken by another host (attempt + 1).
 */
export const executions = agentGatewaySchema.table(
  'executions',
  {
    id: text('id').primaryKey(),
    environmentId: text('environment_id').notNull(),
    runId: text('run_id'),
    stepId: text('step_id'),
    turnId: text('turn_id'),
    agentId: text('agent_id').notNull(),
    agentVersion: integer('agent_version').notNull(),
    input: jsonb('input'),
    status: text('status').$type<'queued' | 'claimed' | 'completed' | 'failed' | 'cancelled'>().notNull(),
    attempt: integer('attempt').notNull(),
    hostId: text('host_id'),
    sessionId: text('session_id'),
    claimedAt: ts('claimed_at'),
    output: jsonb('output'),
    error: jsonb('error').$type<{ code: string; message: string }>(),
    createdAt: ts('created_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('executions_claimable_idx').on(t.environmentId, t.status, t.createdAt)],
);
export * from './endpoints.ts';
