import { encodeAbiParameters, getContractAddress, keccak256 } from 'viem';
import type { DepositRequest } from './deposit-request.ts';

/**
 * The vault factory a source chain deploys vaults with: CREATE2 `from` address and the keccak-256 of the vault's
 * init code. Configurable (`DEPOSITS_VAULT_FACTORY`, `DEPOSITS_VAULT_INIT_CODE_HASH`) so addresses match a real
 * deployment; the defaults are the simulator's.
 */
export interface VaultFactory {
  address: `0x${string}`;
  initCodeHash: `0x${string}`;
}

/**
 * The CREATE2 salt of a quote: keccak-256 of the ABI encoding of
 * `(uint256 sourceChainId, uint256 amount, address recipient, address depositor, address refundRecipient,
 *   uint256 deadline, bytes32 nonce)` (deadline in Unix seconds; nonce 32 random bytes per quote).
 */
export function quoteSalt(
  request: DepositRequest,
  deadlineSeconds: number,
  nonce: `0x${string}`,
): `0x${string}` {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'bytes32' },
      ],
      [
        BigInt(request.sourceChainId),
        request.amount,
        request.recipient,
        request.depositor,
        request.refundRecipient,
        BigInt(deadlineSeconds),
        nonce,
      ],
    ),
  );
}

/**
 * The vault address of a quote: `keccak256(0xff ++ factory ++ salt ++ initCodeHash)[12:]` (EIP-1014), EIP-55
 * checksummed. Deterministic: the same quote always gives the same address.
 */
export function vaultAddress(factory: VaultFactory, salt: `0x${string}`): `0x${string}` {
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory.address,
    salt,
    bytecodeHash: factory.initCodeHash,
  });
}
