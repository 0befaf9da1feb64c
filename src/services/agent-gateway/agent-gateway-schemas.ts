/**
 * TypeBox schemas of the gateway's requests and answers (they are its OpenAPI document). Fields the specification
 * does not show follow the anchor (an agent framework's service layer) and are listed in the README.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { INT4_MAX, Int4, StringEnum } from '../../platform/schemas.ts';
import { SCOPE_ID_PATTERN } from './agent-gateway-config.ts';
import { AGENT_KINDS } from './agent-runtime.ts';
import { EVENT_TYPE_PATTERN } from './automations.ts';
import { MAX_EDGES, MAX_NODES, NODE_TYPES } from './graph.ts';
import { ROLES } from './identity.ts';

/** The error body of every answer that is not a success: `{error, code, message, details?}`. */
export const ErrorBody = Type.Object({
  error: Type.String({ description: 'The HTTP reason phrase ("Conflict").' }),
  code: Type.String({ description: 'A stable machine-readable code (`version_conflict`).' }),
  message: Type.String(),
  details: Type.Optional(
    Type.Object(
      {
        currentVersion: Type.Optional(Type.Integer()),
        issues: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
      },
      { additionalProperties: true },
    ),
  ),
});

/** A tenant or namespace id. */
export const ScopeId = Type.String({ pattern: SCOPE_ID_PATTERN, maxLength: 63 });

/** The scope headers every product route reads (spec E "Authentication"). */
export const ScopeHeaders = Type.Object({
  'x-platform-tenant': Type.Optional(ScopeId),
  'x-platform-namespace': Type.Optional(ScopeId),
});

/** `tenant` / `namespace` of a body or query: they must agree with the headers. */
export const ScopeFields = {
  tenant: Type.Optional(ScopeId),
  namespace: Type.Optional(ScopeId),
};

/** Offset paging of the list routes. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  offset: Type.Optional(Int4({ default: 0 })),
};

/** Page metadata of a list answer. */
export const PageInfo = Type.Object({
  limit: Type.Integer(),
  offset: Type.Integer(),
  total: Type.Integer(),
  hasMore: Type.Boolean(),
});

/** A prefixed resource id in a path (`agt_` + 32 hex); anything else is simply not found. */
export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** A version a client expects (spec E: `expectedVersion`, `version`). */
export const Version = Type.Integer({ minimum: 1, maximum: INT4_MAX });

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const UserSchema = Type.Object({
  id: Type.String(),
  username: Type.String(),
  displayName: Type.String(),
  createdAt: Timestamp,
  disabledAt: Type.Union([Timestamp, Type.Null()]),
});

export const RoleSchema = StringEnum(ROLES);

export const AgentSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  name: Type.String(),
  description: Type.String(),
  kind: StringEnum(AGENT_KINDS),
  conversational: Type.Boolean(),
  definition: Type.Object({ kind: StringEnum(AGENT_KINDS) }, { additionalProperties: true }),
  version: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** An agent definition in a request: `kind` plus the kind's fields (checked by the runtime, README "Agents"). */
export const DefinitionInput = Type.Object(
  { kind: StringEnum(AGENT_KINDS) },
  {
    additionalProperties: true,
    description:
      'The kind and its fields: `template` {template}; `json_transform` {output}; `tool_use` {tools, calls, answer, table?}; `model` {model, systemPrompt?, temperature?, maxTokens?}; `remote` {environmentId, instructions?}.',
  },
);

export const ChatSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  agentId: Type.String(),
  title: Type.String(),
  archived: Type.Boolean(),
  version: Type.Integer(),
  turnCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String() });

export const TurnSchema = Type.Object({
  id: Type.String(),
  chatId: Type.String(),
  seq: Type.Integer(),
  message: Type.String(),
  status: StringEnum(['completed', 'failed', 'pending'] as const),
  reply: Type.Union([Type.Object({ text: Type.String(), data: Type.Optional(Type.Unknown()) }), Type.Null()]),
  error: Type.Union([ErrorInfo, Type.Null()]),
  agentVersion: Type.Integer(),
  createdAt: Timestamp,
  completedAt: NullableTimestamp,
});

/** A list answer `{<name>: [...], page}`. */
export function ListOf(name: string, item: TSchema) {
  return Type.Object({ [name]: Type.Array(item), page: PageInfo });
}

/** Error answers of the product routes, by status. */
export const productErrors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  429: ErrorBody,
};

export const TeamSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  name: Type.String(),
  description: Type.String(),
  members: Type.Array(Type.String(), { description: 'Agent ids, in hand-off order.' }),
  version: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** A workflow graph in a request (checked in full by the service: README "Workflows"). */
export const GraphInput = Type.Object(
  {
    nodes: Type.Array(
      Type.Object(
        { id: Type.String({ minLength: 1, maxLength: 64 }), type: StringEnum(NODE_TYPES) },
        { additionalProperties: true },
      ),
      { minItems: 1, maxItems: MAX_NODES },
    ),
    edges: Type.Array(
      Type.Object(
        {
          from: Type.String({ minLength: 1, maxLength: 64 }),
          to: Type.String({ minLength: 1, maxLength: 64 }),
          on: Type.Optional(StringEnum(['true', 'false', 'approved', 'rejected'] as const)),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_EDGES },
    ),
  },
  { additionalProperties: false },
);

const GraphOutput = Type.Object({
  nodes: Type.Array(Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true })),
  edges: Type.Array(
    Type.Object({ from: Type.String(), to: Type.String(), on: Type.Optional(Type.String()) }),
  ),
});

export const DefinitionSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  name: Type.String(),
  description: Type.String(),
  graph: GraphOutput,
  version: Type.Integer(),
  publishedRevision: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const RevisionSchema = Type.Object({
  id: Type.String(),
  definitionId: Type.String(),
  revision: Type.Integer(),
  graph: GraphOutput,
  publishedBy: Type.Union([Type.String(), Type.Null()]),
  publishedAt: Timestamp,
});

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;

export const RunSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  target: Type.Object({
    type: StringEnum(['agent', 'team', 'orchestration'] as const),
    id: Type.String(),
    revision: Type.Union([Type.Integer(), Type.Null()]),
  }),
  status: StringEnum(RUN_STATUSES),
  input: Type.Unknown(),
  output: Type.Unknown(),
  error: Type.Union([ErrorInfo, Type.Null()]),
  parentRunId: Type.Union([Type.String(), Type.Null()]),
  issueId: Type.Union([Type.String(), Type.Null()]),
  automationId: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  finishedAt: NullableTimestamp,
});

/** A run target in a request: an agent, a team, or a workflow (its latest published revision unless given). */
export const RunTarget = Type.Object(
  {
    type: StringEnum(['agent', 'team', 'orchestration'] as const),
    id: Type.String({ minLength: 1, maxLength: 100 }),
    revision: Type.Optional(Int4({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const RunEventSchema = Type.Object({
  id: Type.Integer(),
  runId: Type.String(),
  stepId: Type.Union([Type.String(), Type.Null()]),
  nodeId: Type.Union([Type.String(), Type.Null()]),
  type: Type.String(),
  data: Type.Unknown(),
  createdAt: Timestamp,
});

const StepState = {
  stepId: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  attempt: Type.Optional(Type.Integer()),
  input: Type.Optional(Type.Unknown()),
  output: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Union([ErrorInfo, Type.Null()])),
  startedAt: Type.Optional(NullableTimestamp),
  finishedAt: Type.Optional(NullableTimestamp),
  dueAt: Type.Optional(NullableTimestamp),
  childRunId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  approvalId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  executionId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
};

export const RunGraphSchema = Type.Object({
  run: RunSchema,
  nodes: Type.Array(
    Type.Object({
      id: Type.String(),
      type: Type.String(),
      ...StepState,
      members: Type.Optional(Type.Array(Type.Object({ agentId: Type.String(), ...StepState }))),
    }),
  ),
  edges: Type.Array(
    Type.Object({ from: Type.String(), to: Type.String(), on: Type.Optional(Type.String()) }),
  ),
});

export const ApprovalSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  runId: Type.String(),
  stepId: Type.String(),
  title: Type.String(),
  status: StringEnum(['pending', 'approved', 'rejected', 'cancelled'] as const),
  decidedBy: Type.Union([Type.String(), Type.Null()]),
  comment: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  decidedAt: NullableTimestamp,
});

export const AssigneeSchema = Type.Object(
  { type: StringEnum(['agent', 'team'] as const), id: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const IssueSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  title: Type.String(),
  description: Type.String(),
  status: StringEnum(['open', 'in_progress', 'in_review', 'done', 'blocked'] as const),
  assignee: Type.Union([Type.Object({ type: Type.String(), id: Type.String() }), Type.Null()]),
  version: Type.Integer({ description: 'Moves with every change; decisions name it as `expectedVersion`.' }),
  result: Type.Unknown(),
  currentRunId: Type.Union([Type.String(), Type.Null()]),
  createdBy: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const CommentSchema = Type.Object({
  id: Type.String(),
  issueId: Type.String(),
  kind: StringEnum(['comment', 'acceptance', 'rejection', 'system'] as const),
  author: Type.Object({ type: Type.String(), id: Type.Union([Type.String(), Type.Null()]) }),
  body: Type.String(),
  createdAt: Timestamp,
});

export const AutomationTrigger = Type.Union([
  Type.Object(
    {
      type: Type.Literal('schedule'),
      cron: Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Five fields: minute hour day month weekday.',
      }),
      timezone: Type.Optional(
        Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone (default UTC).' }),
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('event'),
      event: Type.String({ pattern: EVENT_TYPE_PATTERN, maxLength: 120 }),
      filter: Type.Optional(Type.Unknown({ description: 'A condition on `{event: {type, data}}`.' })),
    },
    { additionalProperties: false },
  ),
]);

export const AutomationSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  namespace: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  trigger: Type.Object({ type: Type.String() }, { additionalProperties: true }),
  target: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: true }),
  input: Type.Unknown(),
  nextFireAt: NullableTimestamp,
  lastFiredAt: NullableTimestamp,
  fireCount: Type.Integer(),
  version: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
