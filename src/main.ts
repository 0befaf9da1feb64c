/**
 * The api-suite command line.
 *
 *   npm start                         every implemented service, api and worker roles, embedded PostgreSQL
 *   npm start -- --role api           HTTP only (several such instances can share one DATABASE_URL)
 *   npm start -- --role worker        background jobs only
 *   npm start -- --services coins     a subset (same as SERVICES=coins)
 *   npm start -- migrate              apply migrations and exit
 *   npm start -- --show-credentials   print the operator token and demo keys in the banner (otherwise only an
 *                                     interactive first start does; they are always in DATA_DIR/credentials.json)
 *
 * Exit codes: 0 after a clean shutdown, 2 for invalid configuration, 1 when the start fails.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from './platform/config.ts';
import { ConfigError } from './platform/errors.ts';
import { createLogger } from './platform/logger.ts';
import { bannerShowsSecrets, formatBanner, startPlatform } from './platform/runtime.ts';
import { implementedServices } from './services/index.ts';

const SHUTDOWN_DEADLINE_MS = 15_000;

/**
 * A second SIGINT or SIGTERM this soon after the first is the same stop request, not an order to exit at once: one
 * Ctrl-C reaches the process twice under `npm start` (the terminal signals the whole process group, and npm forwards
 * the signal to its child again). A signal after this window exits at once (130).
 */
const REPEATED_SIGNAL_GRACE_MS = 3_000;

function fail(code: number, message: string): never {
  process.stderr.write(`api-suite: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs({
      options: {
        role: { type: 'string' },
        services: { type: 'string' },
        'show-credentials': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    fail(2, (err as Error).message);
  }
  if (args.values.help) {
    process.stdout.write(
      'usage: npm start [-- [start|migrate] [--role api|worker|all] [--services a,b] [--show-credentials]]\n',
    );
    return;
  }
  const command = args.positionals[0] ?? 'start';
  if (command !== 'start' && command !== 'migrate')
    fail(2, `unknown command "${command}" (use start or migrate)`);

  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(
      process.env,
      { role: args.values.role as string | undefined, services: args.values.services as string | undefined },
      implementedServices.map((s) => ({ name: s.name, envPrefix: s.envPrefix, defaultPort: s.defaultPort })),
    );
    for (const s of implementedServices) if (config.services.includes(s.name)) s.validateEnv?.(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(2, `invalid configuration: ${err.message}`);
    throw err;
  }
  if (command === 'migrate') config = { ...config, role: 'worker' };

  const logger = createLogger(config.logLevel);
  const services = implementedServices.filter((s) => config.services.includes(s.name));

  // Signals are handled from here on, so a Ctrl-C during the start (embedded PostgreSQL, migrations) still stops
  // everything that was started.
  let started: Awaited<ReturnType<typeof startPlatform>> | undefined;
  let stopRequested: string | undefined;
  let shuttingDown = false;
  let firstSignalAt: number | undefined;
  const onSignal = (signal: string) => {
    const now = performance.now();
    if (firstSignalAt !== undefined) {
      // While starting, the stop already waits for the start to finish (then stops what was started).
      if (!started || now - firstSignalAt < REPEATED_SIGNAL_GRACE_MS) return;
      process.stderr.write(`api-suite: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    firstSignalAt = now;
    shutdown(signal);
  };
  const shutdown = (signal: string) => {
    if (shuttingDown) return;
    if (!started) {
      stopRequested = signal;
      return;
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      process.stderr.write('api-suite: shutdown took longer than 15 s, exiting\n');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    started
      .stop()
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      })
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  try {
    started = await startPlatform(config, services, logger, { runWorker: command === 'start' });
  } catch (err) {
    fail(1, (err as Error).message.split('\n')[0] ?? 'start failed');
  }

  if (command === 'migrate') {
    await started.stop();
    process.stdout.write('migrations applied\n');
    return;
  }
  if (stopRequested) {
    shutdown(stopRequested);
    return;
  }
  const showSecrets = bannerShowsSecrets({
    asked: args.values['show-credentials'] === true,
    interactive: process.stdout.isTTY === true,
    firstStart: started.firstStart,
  });
  process.stdout.write(formatBanner(started, config, { showSecrets }));
}

main().catch((err) => {
  fail(1, (err as Error).message.split('\n')[0] ?? 'start failed');
});
