import { integerVar, parseHttpUrl } from '../../platform/config.ts';
import { ConfigError } from '../../platform/errors.ts';

/** The pattern of tenant and namespace ids (`demo`, `team-a`): lowercase letters, digits and dashes, 1-63. */
export const SCOPE_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';

/** Settings of the agent-orchestration gateway (`AGENT_GATEWAY_...`). */
export interface AgentGatewayConfig {
  /**
   * `AGENT_GATEWAY_SCOPE_MODE` (`single`, default, or `multi`). A single-scope install serves one tenant and
   * namespace (`AGENT_GATEWAY_TENANT` / `AGENT_GATEWAY_NAMESPACE`, default `demo` / `default`, what the first start
   * seeds) and decides the scope itself; a multi-scope install needs the scope of every product request.
   */
  scopeMode: 'single' | 'multi';
  tenant: string;
  namespace: string;
  /** `AGENT_GATEWAY_SESSION_TTL_SECONDS` (default 43200 = 12 h, 300-2592000): lifetime of a login token. */
  sessionTtlSeconds: number;
  /** `AGENT_GATEWAY_HOST_LEASE_SECONDS` (default 30, 5-3600): a host's claims last this long after a heartbeat. */
  hostLeaseSeconds: number;
  /**
   * `AGENT_GATEWAY_ATTEMPT_TOKEN_SECONDS` (default 86400 = 24 h, 60-604800): the longest an attempt token works; it
   * stops earlier when its attempt ends or another host takes the execution over.
   */
  attemptTokenSeconds: number;
  /**
   * `AGENT_GATEWAY_STEP_LEASE_SECONDS` (default 120, 10-3600): a step claimed by a worker longer ago than this is
   * taken to be lost with its worker and retried by the sweep.
   */
  stepLeaseSeconds: number;
  /** `AGENT_GATEWAY_LOGIN_FAILURES_PER_MINUTE` (default 10, 1-1000): failed sign-ins per username a minute before that username is refused (429) until the minute ends; successes are not counted. */
  loginFailuresPerMinute: number;
  /**
   * `AGENT_GATEWAY_TURN_TIMEOUT_MS` (default 60000, 100-600000): the deadline of one execution of an agent that
   * waits on I/O (a chat turn or a run step of a `model` agent or a `tool_use` agent with `fetch_url`); past it the
   * turn or step fails with `turn_timeout`.
   */
  turnTimeoutMs: number;
  /** `AGENT_GATEWAY_TOOL_TIMEOUT_MS` (default 10000, 100-60000): one outbound call of the `fetch_url` tool. */
  toolTimeoutMs: number;
  /**
   * The optional OpenAI-compatible model adapter: `AGENT_GATEWAY_MODEL_BASE_URL` (unset: `model` agents are
   * refused), `AGENT_GATEWAY_MODEL_API_KEY`, `AGENT_GATEWAY_MODEL_TIMEOUT_MS` (default 30000, 100-300000).
   */
  model: { baseUrl: string; apiKey: string; timeoutMs: number } | undefined;
}

/** Reads and validates the service's variables. @throws ConfigError with a one-line reason. */
export function readAgentGatewayConfig(
  env: Readonly<Record<string, string | undefined>>,
): AgentGatewayConfig {
  const get = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const mode = get('AGENT_GATEWAY_SCOPE_MODE') ?? 'single';
  if (mode !== 'single' && mode !== 'multi')
    throw new ConfigError(`AGENT_GATEWAY_SCOPE_MODE must be single or multi (got "${mode}")`);
  const scopeId = (name: string, fallback: string) => {
    const value = get(name) ?? fallback;
    if (!new RegExp(SCOPE_ID_PATTERN).test(value))
      throw new ConfigError(`${name} must be 1-63 lowercase letters, digits and dashes (got "${value}")`);
    return value;
  };
  const baseUrl = get('AGENT_GATEWAY_MODEL_BASE_URL');
  return {
    scopeMode: mode,
    tenant: scopeId('AGENT_GATEWAY_TENANT', 'demo'),
    namespace: scopeId('AGENT_GATEWAY_NAMESPACE', 'default'),
    sessionTtlSeconds: integerVar(env, 'AGENT_GATEWAY_SESSION_TTL_SECONDS', 43_200, 300, 2_592_000),
    hostLeaseSeconds: integerVar(env, 'AGENT_GATEWAY_HOST_LEASE_SECONDS', 30, 5, 3600),
    attemptTokenSeconds: integerVar(env, 'AGENT_GATEWAY_ATTEMPT_TOKEN_SECONDS', 86_400, 60, 604_800),
    stepLeaseSeconds: integerVar(env, 'AGENT_GATEWAY_STEP_LEASE_SECONDS', 120, 10, 3600),
    loginFailuresPerMinute: integerVar(env, 'AGENT_GATEWAY_LOGIN_FAILURES_PER_MINUTE', 10, 1, 1000),
    turnTimeoutMs: integerVar(env, 'AGENT_GATEWAY_TURN_TIMEOUT_MS', 60_000, 100, 600_000),
    toolTimeoutMs: integerVar(env, 'AGENT_GATEWAY_TOOL_TIMEOUT_MS', 10_000, 100, 60_000),
    model: baseUrl
      ? {
          baseUrl: parseHttpUrl('AGENT_GATEWAY_MODEL_BASE_URL', baseUrl).toString().replace(/\/$/, ''),
          apiKey: get('AGENT_GATEWAY_MODEL_API_KEY') ?? 'unused',
          timeoutMs: integerVar(env, 'AGENT_GATEWAY_MODEL_TIMEOUT_MS', 30_000, 100, 300_000),
        }
      : undefined,
  };
}
