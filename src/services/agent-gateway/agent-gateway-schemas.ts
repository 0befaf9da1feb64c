/**
 * TypeBox schemas of the gateway's requests and answers (they are its OpenAPI document). Fields the specification
 * does not show follow the anchor (an agent framework's service layer) and are listed in the README.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { INT4_MAX, Int4, StringEnum } from '../../platform/schemas.ts';
import { SCOPE_ID_PATTERN } from './agent-gateway-config.ts';
import { AGENT_KINDS } from './agent-runtime.ts';
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
