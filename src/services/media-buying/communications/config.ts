/**
 * Settings of text-message lines (`MEDIA_BUYING_TEXT_...`, `MEDIA_BUYING_CARRIER_...`, `MEDIA_BUYING_DRAFTING_...`).
 */
import { ConfigError } from '../../../platform/errors.ts';

/** Settings of text-message lines. */
export interface TextingConfig {
  /** `MEDIA_BUYING_TEXT_DAILY_SEGMENTS` (default 500): SMS segments a line may send per UTC day (spec "Limits"). */
  dailySegments: number;
  /** `MEDIA_BUYING_TEXT_PER_MINUTE` (default 10): texts a line may send per minute (spec "Limits"). */
  perMinute: number;
  /**
   * `MEDIA_BUYING_CARRIER_WEBHOOK_SECRET` (at least 32 characters): the secret of carrier webhook signatures. Unset: a
   * key derived from the secrets key, with which the carrier simulator signs (`POST /_ops/carrier/inbound`).
   */
  webhookSecret: string | undefined;
  /**
   * `MEDIA_BUYING_CARRIER_SIMULATOR_LATENCY_MS` (default 0, at most 10000): how long the carrier simulator takes to
   * accept a text (to watch the queue under a slow carrier).
   */
  simulatorLatencyMs: number;
  /**
   * `MEDIA_BUYING_CARRIER_TIMEOUT_MS` (default 30000, at most 120000): how long one carrier call may take before it is
   * abandoned as a transport failure (the text is pending again, the send job retried). Kept well under the 5 minutes
   * after which another send job takes a text left `sending` for unanswered, so one text is never in two calls.
   */
  carrierTimeoutMs: number;
  /**
   * The optional OpenAI-compatible drafting model: `MEDIA_BUYING_DRAFTING_MODEL_URL` (base URL), `..._MODEL` (model
   * name) and `..._KEY` (API key), all three or none. Unset: the deterministic drafting agent.
   */
  draftingModel: { baseUrl: string; model: string; apiKey: string } | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

function set(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, max: number): number {
  const raw = set(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
    throw new ConfigError(`${name} must be an integer from 1 to ${max} (got "${raw}")`);
  return Number(raw);
}

/** Reads the settings. @throws ConfigError with a one-line reason. */
export function readTextingConfig(env: Env): TextingConfig {
  const webhookSecret = set(env, 'MEDIA_BUYING_CARRIER_WEBHOOK_SECRET');
  if (webhookSecret !== undefined && webhookSecret.length < 32)
    throw new ConfigError('MEDIA_BUYING_CARRIER_WEBHOOK_SECRET must be at least 32 characters');
  const baseUrl = set(env, 'MEDIA_BUYING_DRAFTING_MODEL_URL');
  const model = set(env, 'MEDIA_BUYING_DRAFTING_MODEL');
  const apiKey = set(env, 'MEDIA_BUYING_DRAFTING_MODEL_KEY');
  const given = [baseUrl, model, apiKey].filter((v) => v !== undefined).length;
  if (given !== 0 && given !== 3)
    throw new ConfigError(
      'MEDIA_BUYING_DRAFTING_MODEL_URL, MEDIA_BUYING_DRAFTING_MODEL and MEDIA_BUYING_DRAFTING_MODEL_KEY go together',
    );
  if (baseUrl !== undefined) {
    let protocol = '';
    try {
      protocol = new URL(baseUrl).protocol;
    } catch {}
    if (protocol !== 'https:' && protocol !== 'http:')
      throw new ConfigError(`MEDIA_BUYING_DRAFTING_MODEL_URL must be an http(s) URL (got "${baseUrl}")`);
  }
  return {
    dailySegments: integer(env, 'MEDIA_BUYING_TEXT_DAILY_SEGMENTS', 500, 1_000_000),
    perMinute: integer(env, 'MEDIA_BUYING_TEXT_PER_MINUTE', 10, 10_000),
    webhookSecret,
    simulatorLatencyMs: set(env, 'MEDIA_BUYING_CARRIER_SIMULATOR_LATENCY_MS')
      ? integer(env, 'MEDIA_BUYING_CARRIER_SIMULATOR_LATENCY_MS', 0, 10_000)
      : 0,
    carrierTimeoutMs: integer(env, 'MEDIA_BUYING_CARRIER_TIMEOUT_MS', 30_000, 120_000),
    draftingModel: baseUrl && model && apiKey ? { baseUrl, model, apiKey } : undefined,
  };
}
