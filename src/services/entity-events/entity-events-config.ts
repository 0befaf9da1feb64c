import { ConfigError } from '../../platform/errors.ts';

/** Settings of the entity-events service (`ENTITY_EVENTS_...`). */
export interface EntityEventsConfig {
  /** `ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE` (default 6; 0 = off): simulated events per minute. */
  simulatorEventsPerMinute: number;
  /** `ENTITY_EVENTS_DELIVERY_TIMEOUT_MS` (default 15000, as the delivery peers): one delivery attempt, all of it. */
  deliveryTimeoutMs: number;
}

/** Reads and validates the service's variables. @throws ConfigError with a one-line reason. */
export function readEntityEventsConfig(
  env: Readonly<Record<string, string | undefined>>,
): EntityEventsConfig {
  const raw = env.ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE;
  let rate = 6;
  if (raw !== undefined && raw !== '') {
    if (!/^\d+(\.\d+)?$/.test(raw.trim()) || Number(raw) > 60_000)
      throw new ConfigError(
        `ENTITY_EVENTS_SIMULATOR_EVENTS_PER_MINUTE must be a number from 0 to 60000 (got "${raw}")`,
      );
    rate = Number(raw);
  }
  const timeoutRaw = env.ENTITY_EVENTS_DELIVERY_TIMEOUT_MS;
  let timeout = 15_000;
  if (timeoutRaw !== undefined && timeoutRaw !== '') {
    if (!/^\d+$/.test(timeoutRaw.trim()) || Number(timeoutRaw) < 100 || Number(timeoutRaw) > 60_000)
      throw new ConfigError(
        `ENTITY_EVENTS_DELIVERY_TIMEOUT_MS must be an integer from 100 to 60000 (got "${timeoutRaw}")`,
      );
    timeout = Number(timeoutRaw);
  }
  return { simulatorEventsPerMinute: rate, deliveryTimeoutMs: timeout };
}
