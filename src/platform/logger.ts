import pino from 'pino';
import type { LogLevel } from './config.ts';

/** The platform logger: pino, one JSON line per event; request lines carry `reqId`. */
export type AppLogger = pino.Logger;

/** Field names that hold credentials, redacted wherever they appear at the top of a line or one level below. */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'password',
  'token',
  'secret',
  'apiKey',
  'api_key',
  'clientSecret',
  'client_secret',
  'webhookSecret',
  'webhook_secret',
  'operatorToken',
];

/** Error fields that may hold the values a query ran with: SQL parameters, PostgreSQL's `detail` (`Key (x)=(...)`). */
const VALUE_FIELDS = ['params', 'parameters', 'detail'];

/** Fields of a PostgreSQL error that name what failed without any value (SQLSTATE, constraint, table, column). */
const DATABASE_ERROR_FIELDS = ['code', 'constraint', 'schema', 'table', 'column', 'routine', 'severity'];

/**
 * pino's error serializer without the values a query ran with: a Drizzle query error's message and stack carry
 * `params: <every parameter>` (key hashes, sealed secrets), which becomes `params: [redacted]`; `params` and
 * PostgreSQL's `detail` are dropped; the PostgreSQL error under it is summarised by {@link DATABASE_ERROR_FIELDS}
 * (`db: {code: '23505', constraint, table}`). The SQL text (placeholders, no values) stays: it names the statement.
 */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const out = pino.stdSerializers.err(err) as unknown as Record<string, unknown>;
  const params = (err as { params?: unknown }).params;
  if (params !== undefined) {
    const text = `params: ${String(params)}`;
    for (const field of ['message', 'stack'])
      if (typeof out[field] === 'string')
        out[field] = (out[field] as string).split(text).join('params: [redacted]');
  }
  for (const field of VALUE_FIELDS) delete out[field];
  const cause = (err as { cause?: unknown }).cause;
  if (cause && typeof cause === 'object' && 'code' in cause) {
    const db: Record<string, unknown> = {};
    for (const field of DATABASE_ERROR_FIELDS) {
      const value = (cause as Record<string, unknown>)[field];
      if (value !== undefined) db[field] = value;
    }
    out.db = db;
  }
  return out;
}

/**
 * Creates the root logger. Request lines carry method, path (never the query string, which may hold keys), route,
 * status and duration, not headers; errors are logged without query parameters ({@link serializeError}, under `err`
 * and `error`); fields named like credentials ({@link SECRET_FIELDS}) are redacted anyway.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): AppLogger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      serializers: { err: serializeError, error: serializeError },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          ...SECRET_FIELDS,
          ...SECRET_FIELDS.map((field) => `*.${field}`),
        ],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
