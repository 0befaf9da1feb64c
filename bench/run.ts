/**
 * `npm run bench -- <name> [--duration seconds]`: runs a benchmark. Benchmarks are not tests: each prints its
 * figures and the ratio to a baseline measured in the same run (absolute numbers drift on shared machines).
 * Database: TEST_DATABASE_URL when set, otherwise an embedded PostgreSQL in a temporary directory.
 */
import { parseArgs } from 'node:util';
import { benchAgentGateway } from './agent-gateway.ts';
import { benchCoins } from './coins.ts';
import { benchDeposits } from './deposits.ts';
import { benchEntityEvents } from './entity-events.ts';
import { benchMediaBuying } from './media-buying.ts';
import { benchOdds } from './odds.ts';
import { benchOddsFirstStep } from './odds-first-step.ts';
import { benchPayments } from './payments.ts';
import { benchPricing } from './pricing.ts';

const benches: Record<string, (durationSeconds: number) => Promise<void>> = {
  'media-buying': benchMediaBuying,
  coins: benchCoins,
  deposits: benchDeposits,
  pricing: benchPricing,
  payments: benchPayments,
  odds: benchOdds,
  'odds-first-step': benchOddsFirstStep,
  'entity-events': benchEntityEvents,
  'agent-gateway': benchAgentGateway,
};

const { positionals, values } = parseArgs({
  options: { duration: { type: 'string', default: '10' } },
  allowPositionals: true,
});
const names = positionals.length > 0 ? positionals : Object.keys(benches);
for (const name of names) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown benchmark "${name}" (available: ${Object.keys(benches).join(', ')})`);
    process.exit(2);
  }
  console.log(`== bench ${name}`);
  await bench(Number(values.duration));
}
process.exit(0);
