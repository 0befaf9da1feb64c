import { readdirSync, readFileSync } from 'node:fs';
import { freePort } from '../../src/platform/embedded-postgres.ts';
import { implementedServices } from '../../src/services/index.ts';

export { startCli } from './cli-process.ts';

/** PIDs of `postgres` processes whose command line names `dataDir`. */
export function postgresProcessesFor(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd[0]?.endsWith('postgres') && cmd.some((a) => a.startsWith(dataDir))) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

/** `<PREFIX>_PORT` variables giving every implemented service a free port (`fixed` wins). */
export async function servicePorts(fixed: Record<string, string> = {}): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const s of implementedServices) out[`${s.envPrefix}_PORT`] = String(await freePort());
  return { ...out, ...fixed };
}
