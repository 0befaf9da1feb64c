import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { ConfigError } from './errors.ts';

/** How a service is named in configuration: `name` is its folder, `envPrefix` its variables (`COINS_PORT`). */
export interface ServiceConfigEntry {
  name: string;
  envPrefix: string;
  defaultPort: number;
}

export type Role = 'api' | 'worker' | 'all';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * The validated platform configuration (docs/architecture.md, "Runtime"). Built once at start by
 * {@link loadConfig}; every field is already checked.
 */
export interface PlatformConfig {
  /** Absolute path of `DATA_DIR` (default `./data`): embedded PostgreSQL, generated secrets, credentials.json. */
  dataDir: string;
  /** `DATABASE_URL`: an external PostgreSQL; undefined means embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined;
  /** `REDIS_URL`: shared rate-limit counters; undefined means in-process counters. */
  redisUrl: string | undefined;
  /** `HOST`: the interface services listen on (default `127.0.0.1`). */
  host: string;
  logLevel: LogLevel;
  /** `--role`: `api` serves HTTP only, `worker` runs background jobs only, `all` both (default). */
  role: Role;
  /** Enabled services, in registry order (`SERVICES` or `--services`; default all implemented). */
  services: string[];
  /** Listening port per enabled service (`<PREFIX>_PORT`, default from the registry). */
  ports: Record<string, number>;
  /** Public base URL per enabled service (`<PREFIX>_PUBLIC_URL`, default `http://<host>:<port>`), no trailing slash. */
  publicUrls: Record<string, string>;
  /** `OPERATOR_TOKEN`; undefined means generate one into `dataDir` on first start. */
  operatorToken: string | undefined;
  /** `OUTBOUND_ALLOW_PRIVATE=true`: outbound calls may reach private and loopback addresses (local webhook targets). */
  outboundAllowPrivate: boolean;
  /** `SECRETS_KEY` (32 bytes, base64 or hex): the AES-256-GCM key; undefined means generate one into `dataDir`. */
  secretsKey: Buffer | undefined;
  /** `WORKER_CONCURRENCY` (default 8): jobs run at once per worker process. */
  workerConcurrency: number;
  /** `TRUST_PROXY` (default none): which peers' `X-Forwarded-For` gives the client address ({@link parseTrustProxy}). */
  trustProxy: TrustProxy;
  /** The raw environment, for service-specific settings (each service validates its own at start). */
  env: Readonly<Record<string, string | undefined>>;
}

export interface CliOptions {
  role?: string | undefined;
  services?: string | undefined;
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Parses a TCP port (1-65535). Throws {@link ConfigError} naming the variable. */
export function parsePort(name: string, raw: string): number {
  if (!/^\d{1,5}$/.test(raw.trim()))
    throw new ConfigError(`${name} must be a port number 1-65535 (got "${raw}")`);
  const port = Number(raw.trim());
  if (port < 1 || port > 65535) throw new ConfigError(`${name} must be a port number 1-65535 (got "${raw}")`);
  return port;
}

/**
 * Reads the whole-number variable `name` of `env`: `fallback` when unset or blank, else a decimal integer within
 * `min..max` (inclusive; no sign, no fraction, no exponent).
 * @throws ConfigError `<name> must be an integer <min>-<max> (got "<raw>")`.
 */
export function integerVar(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer ${min}-${max} (got "${raw}")`);
  }
  return Number(raw);
}

/** Parses `true|false|1|0|yes|no` (case-insensitive). Throws {@link ConfigError} for anything else. */
export function parseBoolean(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no', ''].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

/**
 * Which peers are trusted to tell the client's address in `X-Forwarded-For` (Fastify's `trustProxy`, the rules of
 * the `proxy-addr` package): `false` none (the TCP peer is the client), a number of hops, or addresses and CIDR ranges
 * (and proxy-addr's names `loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustProxy = false | number | string[];

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * Parses `TRUST_PROXY`: `false` (or unset), a hop count 1-10, or a comma-separated list of IP addresses, CIDR ranges
 * and the names `loopback`, `linklocal`, `uniquelocal`. "Trust everyone" (`true`) is refused: any client could then
 * choose its own address, and with it its rate-limit budget.
 * @throws ConfigError naming the variable and the entry it could not read.
 */
export function parseTrustProxy(name: string, raw: string | undefined): TrustProxy {
  const v = raw?.trim() ?? '';
  if (v === '' || v.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops < 1 || hops > 10) throw new ConfigError(`${name} hop count must be 1-10 (got "${raw}")`);
    return hops;
  }
  if (v.toLowerCase() === 'true') {
    throw new ConfigError(
      `${name}=true would let any client choose its address; name the proxies (addresses, CIDR ranges, loopback) or a hop count`,
    );
  }
  const entries = v.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const ok = PROXY_RANGE_NAMES.includes(entry) || ipaddr.isValid(entry) || ipaddr.isValidCIDR(entry);
    if (!ok)
      throw new ConfigError(
        `${name} entry "${entry}" is not an IP address, a CIDR range, loopback, linklocal or uniquelocal`,
      );
  }
  return entries;
}

/** Parses an absolute `http:`/`https:` URL. Throws {@link ConfigError}. */
export function parseHttpUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s) URL (got "${raw}")`);
  }
  return url;
}

function parseKey(name: string, raw: string): Buffer {
  const trimmed = raw.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed, 'base64');
  if (buf.length !== 32) throw new ConfigError(`${name} must be 32 bytes, as 64 hex characters or base64`);
  return buf;
}

/**
 * The services to run: `SERVICES` / `--services` (comma list, registry order kept), or all of `known`.
 * @throws ConfigError for an empty list or an unknown name.
 */
function selectServices(raw: string | undefined, known: string[]): string[] {
  if (raw === undefined) return known;
  const wanted = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (wanted.length === 0) throw new ConfigError('SERVICES must name at least one service');
  for (const name of wanted) {
    if (!known.includes(name)) {
      throw new ConfigError(`SERVICES names unknown service "${name}" (available: ${known.join(', ')})`);
    }
  }
  return known.filter((name) => wanted.includes(name));
}

/**
 * Each running service's port (`<PREFIX>_PORT`, default its own) and public URL (`<PREFIX>_PUBLIC_URL`, default
 * `http://<host>:<port>` with a wildcard host shown as 127.0.0.1 and an IPv6 host in brackets).
 * @throws ConfigError for a bad port, two services on one port, or a bad URL.
 */
function serviceAddresses(
  registry: readonly ServiceConfigEntry[],
  services: string[],
  host: string,
  get: (key: string) => string | undefined,
): { ports: Record<string, number>; publicUrls: Record<string, string> } {
  const ports: Record<string, number> = {};
  const publicUrls: Record<string, string> = {};
  const byPort = new Map<number, string>();
  const displayHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  for (const entry of registry) {
    if (!services.includes(entry.name)) continue;
    const portVar = `${entry.envPrefix}_PORT`;
    const portRaw = get(portVar);
    const port = portRaw === undefined ? entry.defaultPort : parsePort(portVar, portRaw);
    const clash = byPort.get(port);
    if (clash !== undefined)
      throw new ConfigError(`${portVar}=${port} is already the port of service "${clash}"`);
    byPort.set(port, entry.name);
    ports[entry.name] = port;
    const publicVar = `${entry.envPrefix}_PUBLIC_URL`;
    const publicRaw = get(publicVar);
    publicUrls[entry.name] =
      publicRaw === undefined
        ? `http://${displayHost}:${port}`
        : parseHttpUrl(publicVar, publicRaw).toString().replace(/\/$/, '');
  }
  return { ports, publicUrls };
}

/**
 * `OPERATOR_TOKEN`: at least 16 characters of an RFC 6750 bearer token (it is sent as `Authorization: Bearer`).
 * @throws ConfigError otherwise.
 */
function parseOperatorToken(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < 16) throw new ConfigError('OPERATOR_TOKEN must be at least 16 characters');
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(raw)) {
    throw new ConfigError(
      'OPERATOR_TOKEN may contain only letters, digits and - . _ ~ + / (then = padding): it is sent as a bearer token',
    );
  }
  return raw;
}

/**
 * Reads and validates the configuration from `env` and the command line.
 *
 * @param registry every implemented service, in start order.
 * @throws ConfigError with a one-line reason for the first invalid variable.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  cli: CliOptions,
  registry: readonly ServiceConfigEntry[],
  cwd: string = process.cwd(),
): PlatformConfig {
  const get = (key: string): string | undefined => {
    const v = env[key];
    return v === undefined || v.trim() === '' ? undefined : v;
  };

  const roleRaw = cli.role ?? 'all';
  if (roleRaw !== 'api' && roleRaw !== 'worker' && roleRaw !== 'all') {
    throw new ConfigError(`--role must be api, worker or all (got "${roleRaw}")`);
  }
  const services = selectServices(
    cli.services ?? get('SERVICES'),
    registry.map((s) => s.name),
  );

  const logLevelRaw = (get('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevelRaw as LogLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${get('LOG_LEVEL')}")`);
  }

  const host = get('HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:-]+$/.test(host))
    throw new ConfigError(`HOST must be a host name or IP address (got "${host}")`);

  const databaseUrlRaw = get('DATABASE_URL');
  if (databaseUrlRaw !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrlRaw)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// connection URL');
  }
  const redisUrlRaw = get('REDIS_URL');
  if (redisUrlRaw !== undefined && !/^rediss?:\/\//.test(redisUrlRaw)) {
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  }

  const { ports, publicUrls } = serviceAddresses(registry, services, host, get);

  const operatorToken = parseOperatorToken(get('OPERATOR_TOKEN'));

  const workerConcurrency = integerVar(env, 'WORKER_CONCURRENCY', 8, 1, 100);

  const secretsKeyRaw = get('SECRETS_KEY');

  return {
    dataDir: path.resolve(cwd, get('DATA_DIR') ?? 'data'),
    databaseUrl: databaseUrlRaw,
    redisUrl: redisUrlRaw,
    host,
    logLevel: logLevelRaw as LogLevel,
    role: roleRaw,
    services,
    ports,
    publicUrls,
    operatorToken,
    outboundAllowPrivate:
      get('OUTBOUND_ALLOW_PRIVATE') === undefined
        ? false
        : parseBoolean('OUTBOUND_ALLOW_PRIVATE', get('OUTBOUND_ALLOW_PRIVATE')!),
    secretsKey: secretsKeyRaw === undefined ? undefined : parseKey('SECRETS_KEY', secretsKeyRaw),
    workerConcurrency,
    trustProxy: parseTrustProxy('TRUST_PROXY', get('TRUST_PROXY')),
    env,
  };
}
