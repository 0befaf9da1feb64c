/**
 * What the gateway's route plugins share, built once per app: authentication per credential kind (credential types
 * are never interchangeable: a valid credential of another kind is a 401 `wrong_credential_type`), and the scope
 * of a product request (spec E "Authentication": `X-Platform-Tenant` / `X-Platform-Namespace`, body and query
 * `tenant` / `namespace` must agree; a single-scope install decides the scope; a multi-scope install needs one the
 * caller has a role in).
 */
import type { FastifyRequest } from 'fastify';
import {
  type Authentication,
  bearerToken,
  defineAuthentication,
  firstHeader,
} from '../../../platform/auth.ts';
import type { AgentGatewayConfig } from '../agent-gateway-config.ts';
import {
  scopeMismatch,
  scopeRequired,
  tokenExpired,
  tokenRevoked,
  unauthenticated,
  wrongCredentialType,
} from '../agent-gateway-errors.ts';
import {
  CREDENTIAL_NAMES,
  type CredentialKind,
  type CredentialPrincipal,
  type CredentialStore,
  type IdentityService,
  type Role,
  type Scope,
} from '../identity.ts';

/** The header of the environment key (spec E: worker protocol). */
export const ENVIRONMENT_KEY_HEADER = 'x-builder-environment-key';

/** The security requirement of each credential kind (OpenAPI `security`). */
export const SECURITY: Record<CredentialKind, { [scheme: string]: [] }[]> = {
  session: [{ userToken: [] }],
  host: [{ hostCredential: [] }],
  environment: [{ environmentKey: [] }],
  attempt: [{ attemptToken: [] }],
  internal: [{ internalToken: [] }],
};

/** The OpenAPI security schemes of the gateway. */
export const SECURITY_SCHEMES = {
  userToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A user bearer token (`ags_...`) from `POST /api/auth/login`.',
  },
  hostCredential: {
    type: 'http',
    scheme: 'bearer',
    description: 'A runtime host credential (`agh_...`): host registration and heartbeat.',
  },
  environmentKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Builder-Environment-Key',
    description: 'An environment key (`age_...`): the worker protocol (claiming executions).',
  },
  attemptToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A task or attempt token (`aga_...`) from a claim: reports of that execution attempt only.',
  },
  internalToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'An internal service token (`agi_...`): trusted component traffic, not a user identity.',
  },
};

/** A user caller with the scope of the request and the role it holds there. */
export interface UserCaller {
  userId: string;
  credentialId: number;
  scope: Scope;
  role: Role;
}

function authenticationFor(keys: CredentialStore, kind: CredentialKind): Authentication<CredentialPrincipal> {
  return defineAuthentication<CredentialPrincipal>(async (request) => {
    const presented =
      kind === 'environment'
        ? firstHeader(request.headers[ENVIRONMENT_KEY_HEADER])
        : bearerToken(request.headers.authorization);
    if (!presented) throw unauthenticated(CREDENTIAL_NAMES[kind]);
    const found = await keys.resolve(presented);
    if (found.status === 'revoked') throw tokenRevoked();
    if (found.status === 'expired') throw tokenExpired();
    if (found.status !== 'active') throw unauthenticated(CREDENTIAL_NAMES[kind]);
    if (found.principal.kind !== kind)
      throw wrongCredentialType(CREDENTIAL_NAMES[kind], CREDENTIAL_NAMES[found.principal.kind]);
    return found.principal;
  });
}

function fieldOf(source: unknown, name: 'tenant' | 'namespace'): string | undefined {
  if (!source || typeof source !== 'object') return undefined;
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The scope a request names: each of tenant and namespace from the header, the body and the query, which must all
 * agree (400 `scope_mismatch`), then the install's decision (single: its own scope, which a named scope must be;
 * multi: the named scope, 400 `scope_required` when missing).
 */
export function requestScope(request: FastifyRequest, config: AgentGatewayConfig): Scope {
  const pick = (name: 'tenant' | 'namespace') => {
    const header = firstHeader(request.headers[`x-platform-${name}`]);
    const named = [
      { where: `X-Platform-${name === 'tenant' ? 'Tenant' : 'Namespace'}`, value: header },
      { where: `body.${name}`, value: fieldOf(request.body, name) },
      { where: `query.${name}`, value: fieldOf(request.query, name) },
    ].filter((n): n is { where: string; value: string } => n.value !== undefined);
    const first = named[0];
    const other = named.find((n) => n.value !== first?.value);
    if (first && other)
      throw scopeMismatch(`${first.where} '${first.value}' and ${other.where} '${other.value}' disagree.`);
    return first?.value;
  };
  const tenant = pick('tenant');
  const namespace = pick('namespace');
  if (config.scopeMode === 'single') {
    if (
      (tenant !== undefined && tenant !== config.tenant) ||
      (namespace !== undefined && namespace !== config.namespace)
    )
      throw scopeMismatch(
        `This install serves one scope (tenant '${config.tenant}', namespace '${config.namespace}') and decides it itself.`,
      );
    return { tenant: config.tenant, namespace: config.namespace };
  }
  if (tenant === undefined || namespace === undefined) throw scopeRequired();
  return { tenant, namespace };
}

/**
 * The authentication hooks of every kind, and `user(needs)`: the hooks of a product route (the user token before
 * validation; after validation, the scope and the caller's role in it, 403 below `needs`), with `caller(request)`.
 */
export function gatewayRouteContext(deps: {
  keys: CredentialStore;
  identity: IdentityService;
  config: AgentGatewayConfig;
}) {
  const auth = {
    session: authenticationFor(deps.keys, 'session'),
    host: authenticationFor(deps.keys, 'host'),
    environment: authenticationFor(deps.keys, 'environment'),
    attempt: authenticationFor(deps.keys, 'attempt'),
    internal: authenticationFor(deps.keys, 'internal'),
  };
  const callers = new WeakMap<FastifyRequest, UserCaller>();
  const scoped = (needs: Role) => async (request: FastifyRequest) => {
    const principal = auth.session.principal(request);
    const scope = requestScope(request, deps.config);
    const role = await deps.identity.authorize(principal.userId!, scope, needs);
    callers.set(request, { userId: principal.userId!, credentialId: principal.credentialId, scope, role });
  };
  return {
    auth,
    /** `onRequest` and `preHandler` hooks of a product route needing `needs` in the request's scope. */
    user: (needs: Role) => ({ onRequest: auth.session.onRequest, preHandler: scoped(needs) }),
    /** The user caller of a product route (after its hooks). */
    caller(request: FastifyRequest): UserCaller {
      const caller = callers.get(request);
      if (!caller) throw new Error('route read a caller it did not scope');
      return caller;
    },
  };
}

/** The shared context of the gateway's route plugins. */
export type GatewayRouteContext = ReturnType<typeof gatewayRouteContext>;
