import { isAddress } from 'viem';

/** uint256 upper bound (exclusive): 2^256. */
export const UINT256_LIMIT = 1n << 256n;

/**
 * A deposit-address request after validation (spec C, POST /v1/stablecoin-gateway/deposit-addresses).
 * Addresses are lowercase `0x` + 40 hex; `amount` is base units of the source-chain stablecoin (USDC: 6 decimals).
 */
export interface DepositRequest {
  sourceChainId: number;
  amount: bigint;
  recipient: `0x${string}`;
  depositor: `0x${string}`;
  /** Receives expiry refunds; `depositor` when the request leaves it out. */
  refundRecipient: `0x${string}`;
}

/** Field -> messages, every failing field at once (the service answers it as `validationErrors`). */
export type ValidationErrors = Record<string, string[]>;

const ALLOWED = new Set(['sourceChainId', 'amount', 'recipient', 'depositor', 'refundRecipient']);
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function checkAddress(
  value: unknown,
  field: string,
  errors: ValidationErrors,
  required: boolean,
): `0x${string}` | undefined {
  if (value === undefined || value === null) {
    if (required) errors[field] = [`${field} is required`];
    return undefined;
  }
  if (typeof value !== 'string' || !ADDRESS.test(value)) {
    errors[field] = [`${field} must be an address: 0x followed by 40 hexadecimal characters`];
    return undefined;
  }
  const hex = value.slice(2);
  const mixedCase = hex !== hex.toLowerCase() && hex !== hex.toUpperCase();
  if (mixedCase && !isAddress(value, { strict: true })) {
    errors[field] = [
      `${field} has an invalid EIP-55 checksum (send it all lowercase, or with the right checksum)`,
    ];
    return undefined;
  }
  return value.toLowerCase() as `0x${string}`;
}

/**
 * Validates a request body, reporting every failing field at once.
 * Rules (spec C): `sourceChainId` an integer >= 1; `amount` a string of decimal digits, no sign, no decimal point,
 * no exponent, no whitespace, no leading zero, greater than 0 and below 2^256; `recipient`, `depositor` and the
 * optional `refundRecipient` are `0x` + 40 hex (all-lowercase and all-uppercase accepted; a mixed-case address must
 * carry a valid EIP-55 checksum). Unknown fields are refused.
 *
 * @returns `{ value }` or `{ errors }` (field -> messages).
 */
export function validateDepositRequest(
  body: unknown,
): { value: DepositRequest } | { errors: ValidationErrors } {
  const errors: ValidationErrors = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { errors: { body: ['the body must be a JSON object'] } };
  }
  const input = body as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!ALLOWED.has(key)) errors[key] = [`property ${key} should not exist`];
  }

  let sourceChainId: number | undefined;
  const chain = input.sourceChainId;
  if (chain === undefined || chain === null) errors.sourceChainId = ['sourceChainId is required'];
  else if (typeof chain !== 'number' || !Number.isSafeInteger(chain))
    errors.sourceChainId = ['sourceChainId must be an integer'];
  else if (chain < 1) errors.sourceChainId = ['sourceChainId must not be less than 1'];
  else sourceChainId = chain;

  let amount: bigint | undefined;
  const rawAmount = input.amount;
  if (rawAmount === undefined || rawAmount === null) errors.amount = ['amount is required'];
  else if (typeof rawAmount !== 'string')
    errors.amount = ['amount must be a string of base units (for example "1000000")'];
  else if (!/^[0-9]+$/.test(rawAmount)) {
    errors.amount = [
      'amount must contain only the digits 0-9 (no sign, decimal point, exponent or whitespace)',
    ];
  } else if (/^0+$/.test(rawAmount)) errors.amount = ['amount must be greater than 0'];
  else if (rawAmount.startsWith('0')) errors.amount = ['amount must not have leading zeros'];
  else if (rawAmount.length > 78 || BigInt(rawAmount) >= UINT256_LIMIT) {
    errors.amount = ['amount must fit an unsigned 256-bit integer (below 2^256)'];
  } else amount = BigInt(rawAmount);

  const recipient = checkAddress(input.recipient, 'recipient', errors, true);
  const depositor = checkAddress(input.depositor, 'depositor', errors, true);
  const refund = checkAddress(input.refundRecipient, 'refundRecipient', errors, false);

  if (
    Object.keys(errors).length > 0 ||
    sourceChainId === undefined ||
    amount === undefined ||
    !recipient ||
    !depositor
  ) {
    return { errors };
  }
  return { value: { sourceChainId, amount, recipient, depositor, refundRecipient: refund ?? depositor } };
}
