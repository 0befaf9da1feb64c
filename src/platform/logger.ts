import pino from 'pino';
import type { LogLevel } from './config.ts';

/** The platform logger: pino, one JSON line per event; request lines carry `reqId`. */
export type AppLogger = pino.Logger;

/**
 * Creates the root logger. Request lines carry method, path (never the query string, which may hold keys), route,
 * status and duration, not headers; common secret fields are redacted anyway.
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): AppLogger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'headers.authorization',
          'password',
          'token',
          'secret',
        ],
        censor: '[redacted]',
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
