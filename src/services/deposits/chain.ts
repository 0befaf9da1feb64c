import { eq } from 'drizzle-orm';
import { keccak256, toHex } from 'viem';
import type { Db } from '../../platform/database.ts';
import { simulatorSettings } from './db/schema.ts';

/**
 * The chains the gateway talks to (docs/architecture.md: external systems behind an interface, a simulator by
 * default). Funding is observed (the simulator's transfers are recorded through the operator API); these are the
 * gateway's own transactions.
 */
export interface GatewayChain {
  /** Makes the destination-chain deposit of a funded vault. Returns its transaction hash; throws when it fails. */
  publishDeposit(input: {
    vaultAddress: string;
    recipient: string;
    amount: bigint;
    sourceChainId: number;
  }): Promise<`0x${string}`>;
  /** Sends `amount` from the vault back to `to` on the source chain. Returns the transaction hash. */
  refund(input: {
    vaultAddress: string;
    to: string;
    amount: bigint;
    sourceChainId: number;
    sequence: number;
  }): Promise<`0x${string}`>;
}

/**
 * The simulated chains: transactions succeed and get deterministic hashes derived from the vault and the action.
 * The operator switch `failPublishes` (table `simulator_settings`, shared by all instances) makes destination
 * deposits fail, to exercise the FAILED state.
 */
export class SimulatedChain implements GatewayChain {
  constructor(private readonly db: Db) {}

  async publishDeposit(input: {
    vaultAddress: string;
    recipient: string;
    amount: bigint;
    sourceChainId: number;
  }) {
    const [setting] = await this.db
      .select()
      .from(simulatorSettings)
      .where(eq(simulatorSettings.name, 'failPublishes'));
    if (setting?.enabled) throw new Error('destination deposit reverted (simulated failure)');
    return keccak256(
      toHex(`publish:${input.sourceChainId}:${input.vaultAddress}:${input.recipient}:${input.amount}`),
    );
  }

  async refund(input: {
    vaultAddress: string;
    to: string;
    amount: bigint;
    sourceChainId: number;
    sequence: number;
  }) {
    return keccak256(
      toHex(
        `refund:${input.sourceChainId}:${input.vaultAddress}:${input.to}:${input.amount}:${input.sequence}`,
      ),
    );
  }

  /** Sets a simulator switch. */
  async setSwitch(name: 'failPublishes', enabled: boolean): Promise<void> {
    await this.db
      .insert(simulatorSettings)
      .values({ name, enabled })
      .onConflictDoUpdate({ target: simulatorSettings.name, set: { enabled } });
  }
}
