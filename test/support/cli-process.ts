/**
 * Test support: the `api-suite` command started as a child process the way `npm start` runs it
 * (`node --import tsx src/main.ts`), for tests of the runtime contract (signals, roles, a worker killed mid-job).
 * Platform code, so that service tests may use it too (a service imports only the platform and its own folder).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** The repository root (where `src/main.ts` is). */
export const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** A running `api-suite` process started as `npm start` runs it (`node --import tsx src/main.ts`). */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout contains `text` (rejects on exit or after `timeoutMs`). */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code (or 128+signal) within `timeoutMs`, else rejects. */
  exited(timeoutMs?: number): Promise<number>;
}

/**
 * Starts the CLI with `args` and `env` (added to a clean copy of this process's environment). With `npm: true` it is
 * started through `npm start --` as a new process group (npm, its shell and node), so a test can signal the whole
 * group as a terminal's Ctrl-C does (`process.kill(-child.pid, 'SIGINT')`); `child` is then npm.
 */
export function startCli(
  args: string[],
  env: Record<string, string | undefined>,
  options: { npm?: boolean } = {},
): CliProcess {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      v !== undefined &&
      !['DATABASE_URL', 'SERVICES', 'OPERATOR_TOKEN', 'DATA_DIR', 'REDIS_URL'].includes(k)
    )
      childEnv[k] = v;
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
  const child = options.npm
    ? spawn('npm', ['start', '--silent', '--', ...args], {
        cwd: ROOT,
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
    : spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), ...args], {
        cwd: ROOT,
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const exitPromise = new Promise<number>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 0)));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor(text, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const timer = setInterval(() => {
          if (out.includes(text)) {
            clearInterval(timer);
            resolve();
          } else if (child.exitCode !== null) {
            clearInterval(timer);
            reject(
              new Error(
                `exited with ${child.exitCode} before "${text}"\nstdout: ${out.slice(-2000)}\nstderr: ${err.slice(-2000)}`,
              ),
            );
          } else if (Date.now() - started > timeoutMs) {
            clearInterval(timer);
            reject(
              new Error(
                `no "${text}" within ${timeoutMs} ms\nstdout: ${out.slice(-2000)}\nstderr: ${err.slice(-2000)}`,
              ),
            );
          }
        }, 50);
      });
    },
    exited(timeoutMs = 20_000) {
      return Promise.race([
        exitPromise,
        new Promise<number>((_, reject) =>
          setTimeout(() => reject(new Error(`did not exit within ${timeoutMs} ms`)), timeoutMs).unref(),
        ),
      ]);
    },
  };
}
