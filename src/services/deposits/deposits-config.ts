import { isAddress } from 'viem';
import { integerVar } from '../../platform/config.ts';
import { ConfigError } from '../../platform/errors.ts';
import type { VaultFactory } from './vault-address.ts';

/**
 * Settings of the deposit-address service, from the environment:
 * - `DEPOSITS_SOURCE_CHAINS`: comma list of accepted source chain ids (default `1,10,137,8453,42161`: Ethereum,
 *   OP Mainnet, Polygon PoS, Base, Arbitrum One);
 * - `DEPOSITS_QUOTE_TTL_SECONDS`: seconds from quote to deadline (default 1800, 60..86400);
 * - `DEPOSITS_VAULT_FACTORY`, `DEPOSITS_VAULT_INIT_CODE_HASH`: the CREATE2 deployer and vault init-code hash;
 * - `DEPOSITS_ANONYMOUS_RATE_LIMIT`: requests per minute per client address without a key (default 120);
 * - `DEPOSITS_KEY_RATE_LIMIT`: requests per minute per key by default (default 1200).
 */
export interface DepositsConfig {
  sourceChains: number[];
  quoteTtlSeconds: number;
  factory: VaultFactory;
  anonymousRateLimit: number;
  keyRateLimit: number;
}

export const DEFAULT_FACTORY: VaultFactory = {
  address: '0x4e59b44847b379578588920cA78FbF26c0B4956C',
  initCodeHash: '0x21c35dbe1b344a2488cf3321d6ce542f8e9f305544ff09e4993a62319a497c1f',
};

/** Reads and checks the settings. @throws ConfigError naming the variable. */
export function readDepositsConfig(env: Readonly<Record<string, string | undefined>>): DepositsConfig {
  const chainsRaw = env.DEPOSITS_SOURCE_CHAINS?.trim() || '1,10,137,8453,42161';
  const sourceChains = chainsRaw.split(',').map((s) => s.trim());
  if (sourceChains.some((c) => !/^\d+$/.test(c) || Number(c) < 1 || !Number.isSafeInteger(Number(c)))) {
    throw new ConfigError(
      `DEPOSITS_SOURCE_CHAINS must be a comma list of chain ids >= 1 (got "${chainsRaw}")`,
    );
  }
  const address = env.DEPOSITS_VAULT_FACTORY?.trim() || DEFAULT_FACTORY.address;
  if (!isAddress(address, { strict: false }))
    throw new ConfigError('DEPOSITS_VAULT_FACTORY must be an address (0x + 40 hex)');
  const initCodeHash = env.DEPOSITS_VAULT_INIT_CODE_HASH?.trim() || DEFAULT_FACTORY.initCodeHash;
  if (!/^0x[0-9a-fA-F]{64}$/.test(initCodeHash))
    throw new ConfigError('DEPOSITS_VAULT_INIT_CODE_HASH must be 0x + 64 hex');
  return {
    sourceChains: sourceChains.map(Number),
    quoteTtlSeconds: integerVar(env, 'DEPOSITS_QUOTE_TTL_SECONDS', 1800, 60, 86_400),
    factory: { address: address as `0x${string}`, initCodeHash: initCodeHash as `0x${string}` },
    anonymousRateLimit: integerVar(env, 'DEPOSITS_ANONYMOUS_RATE_LIMIT', 120, 1, 1_000_000),
    keyRateLimit: integerVar(env, 'DEPOSITS_KEY_RATE_LIMIT', 1200, 1, 1_000_000),
  };
}
