/**
 * `npx tsx scripts/coins-platform-coverage.ts [--unmatched]`: the coverage of the coins service's platform map
 * (src/services/coins/README.md, "Data"): per token list, its entries, those in scope (a chain with a CoinGecko
 * platform id, a contract address), how many were matched to a coin id and by which rule, and why the others were
 * not. Prints the Markdown table the README carries (a test checks that they are equal); `--unmatched` adds every
 * unmatched token with its reason, tab-separated.
 */
import { coverageMarkdown, unmatchedLines } from '../src/services/coins/platform-coverage.ts';
import { listPlatformMap } from '../src/services/coins/seed-data.ts';

const { map, digest } = listPlatformMap();
console.log(coverageMarkdown(map));
console.log(`\nDigest of what the lists add (coins.seed_updates): ${digest}`);
if (map.unusedExceptions.length > 0)
  console.log(`\nExceptions matching no token (stale): ${map.unusedExceptions.length}`);
if (process.argv.includes('--unmatched')) {
  console.log('\nreason\tplatform\taddress\tentries\tdetail');
  for (const line of unmatchedLines(map)) console.log(line);
}
