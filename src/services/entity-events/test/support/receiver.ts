import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { waitUntil } from '../../../../../test/support/wait.ts';

/** One request the Python receiver got, with its own verdict on the signature. */
export interface Received {
  path: string;
  verified: boolean;
  reason: string | null;
  status_returned: number;
  content_type: string | null;
  timestamp: string | null;
  signature: string | null;
  headers: Record<string, string>;
  raw_body: string;
  payload: Record<string, unknown> | null;
  received_at_ms: number;
}

/** Handle of the Python standard-library receiver (test/support/receiver.py). */
export interface PythonReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  setSecret(webhookId: string, secret: string): Promise<void>;
  /** Makes POSTs to `path` answer `status` (with `Retry-After` when given) once their signature verifies. */
  behavior(path: string, status: number, retryAfter?: number, delayMs?: number): Promise<void>;
  received(): Promise<Received[]>;
  reset(): Promise<void>;
  /** Polls until `predicate(received)` holds or `timeoutMs` passes; returns the list. */
  waitFor(predicate: (r: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  stop(): Promise<void>;
}

/** Starts the Python receiver on a free loopback port. */
export async function startPythonReceiver(): Promise<PythonReceiver> {
  const child: ChildProcess = spawn('python3', [path.join(import.meta.dirname, 'receiver.py')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.once('line', (line) => resolve(Number(line.trim())));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`receiver exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${url}${p}`, { method: 'POST', body: JSON.stringify(body) });
    await res.arrayBuffer();
  };
  const received = async () => (await (await fetch(`${url}/_control/received`)).json()) as Received[];
  return {
    url,
    setSecret: (webhookId, secret) => post('/_control/secrets', { [webhookId]: secret }),
    behavior: (p, status, retryAfter, delayMs) =>
      post('/_control/behavior', { path: p, status, retry_after: retryAfter, delay_ms: delayMs }),
    received,
    reset: () => post('/_control/reset', {}),
    waitFor(predicate, timeoutMs = 10_000) {
      return waitUntil(
        'the receiver to get the requests asked for',
        async () => {
          const list = await received();
          return predicate(list) && list;
        },
        { timeoutMs },
      );
    },
    async stop() {
      child.kill('SIGTERM');
    },
  };
}
