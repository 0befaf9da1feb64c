import { integerVar, parseHttpUrl } from '../../platform/config.ts';
import { ConfigError } from '../../platform/errors.ts';
import { SIMULATED_SPORTS } from './sport-models.ts';
import type { UpstreamConfig } from './upstream.ts';

/** The service's variables (`ODDS_*`). */
export interface OddsConfig {
  /** `ODDS_SIMULATOR` (`on` | `off`, default `on`): the built-in feed simulator. */
  simulator: boolean;
  /** `ODDS_SIM_SEED` (default `api-suite`): the simulator's seed; the same seed gives the same games and prices. */
  seed: string;
  /** `ODDS_SIM_SPORTS` (comma-separated sport ids, default every listed sport 1-16): the sports it simulates. */
  simSports: number[];
  /** `ODDS_SIM_INTERVAL_SECONDS` (1..3600, default 10): how often the worker steps the simulator. */
  intervalSeconds: number;
  /** `ODDS_WS_HEARTBEAT_SECONDS` (0.05..300, default 15): WebSocket heartbeat period. */
  heartbeatSeconds: number;
  /** `ODDS_UPSTREAM_URL` + `ODDS_UPSTREAM_KEY` (+ `ODDS_UPSTREAM_SPORTS`, default `4`): the optional upstream sync. */
  upstream: UpstreamConfig | undefined;
}

/** Reads and validates `ODDS_*`. @throws ConfigError with a one-line reason. */
export function readOddsConfig(env: Readonly<Record<string, string | undefined>>): OddsConfig {
  const sim = env.ODDS_SIMULATOR ?? 'on';
  if (sim !== 'on' && sim !== 'off') throw new ConfigError('ODDS_SIMULATOR must be on or off');
  const num = (name: string, def: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new ConfigError(`${name} must be a number from ${min} to ${max}`);
    return n;
  };
  let upstream: UpstreamConfig | undefined;
  if (env.ODDS_UPSTREAM_URL) {
    parseHttpUrl('ODDS_UPSTREAM_URL', env.ODDS_UPSTREAM_URL);
    if (!env.ODDS_UPSTREAM_KEY) throw new ConfigError('ODDS_UPSTREAM_KEY is required with ODDS_UPSTREAM_URL');
    const sports = (env.ODDS_UPSTREAM_SPORTS ?? '4').split(',').map((s) => Number(s.trim()));
    if (sports.some((s) => !Number.isInteger(s) || s < 1 || s > 1000))
      throw new ConfigError('ODDS_UPSTREAM_SPORTS must be comma-separated sport ids');
    upstream = { url: env.ODDS_UPSTREAM_URL, key: env.ODDS_UPSTREAM_KEY, sportIds: sports };
  }
  const simSports = (env.ODDS_SIM_SPORTS || SIMULATED_SPORTS.join(',')).split(',').map((x) => x.trim());
  if (simSports.some((x) => !/^\d{1,2}$/.test(x) || !SIMULATED_SPORTS.includes(Number(x))))
    throw new ConfigError(
      `ODDS_SIM_SPORTS must be comma-separated sport ids from ${SIMULATED_SPORTS.join(',')}`,
    );
  return {
    upstream,
    simulator: sim === 'on',
    seed: env.ODDS_SIM_SEED || 'api-suite',
    simSports: [...new Set(simSports.map(Number))],
    intervalSeconds: integerVar(env, 'ODDS_SIM_INTERVAL_SECONDS', 10, 1, 3600),
    heartbeatSeconds: num('ODDS_WS_HEARTBEAT_SECONDS', 15, 0.05, 300),
  };
}
