import { Type } from '@sinclair/typebox';
import { Int4, StringEnum } from '../../platform/schemas.ts';

const Address = Type.String({
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: '0x + 40 hex (EIP-55 checksum optional)',
});

export const DepositErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    message: Type.String(),
    error: Type.String(),
    validationErrors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    details: Type.Optional(Type.Object({ errorCode: Type.String(), errorDesc: Type.String() })),
  },
  {
    description:
      '`validationErrors` for validation failures (every failing field), `details` for business errors',
  },
);

/** Request body of POST /v1/stablecoin-gateway/deposit-addresses (documentation; validated by the domain). */
export const CreateDepositAddressBody = Type.Object({
  sourceChainId: Int4({
    minimum: 1,
    description: 'Source chain id (EIP-155), one of the configured chains',
  }),
  amount: Type.String({
    pattern: '^[1-9][0-9]*$',
    description: 'Base units of the source-chain stablecoin (USDC: 6 decimals), below 2^256',
    examples: ['25000000'],
  }),
  recipient: Address,
  depositor: Address,
  refundRecipient: Type.Optional(Address),
});

export const QuoteSchema = Type.Object({
  vaultAddress: Type.String({ description: 'EIP-55 checksummed CREATE2 vault address' }),
  amount: Type.String({ description: 'Base units to send to the vault' }),
  deadline: Type.Integer({ description: 'Unix seconds; the vault must receive amount before it' }),
});

export const QuoteResponse = Type.Object({ data: QuoteSchema });

export const VaultStatusSchema = StringEnum([
  'PENDING',
  'FUNDING_DETECTED',
  'PUBLISHED',
  'EXPIRED_UNFUNDED',
  'FAILED',
  'REFUNDED_BY_USER',
] as const);

export const TransferSchema = Type.Object({
  direction: StringEnum(['in', 'out'] as const),
  kind: StringEnum(['plain', 'gasless', 'refund'] as const),
  from: Type.String(),
  to: Type.String(),
  amount: Type.String(),
  txHash: Type.String(),
  observedAt: Type.String({ format: 'date-time' }),
});

export const DepositAddressSchema = Type.Object({
  vaultAddress: Type.String(),
  amount: Type.String(),
  deadline: Type.Integer(),
  status: VaultStatusSchema,
  sourceChainId: Type.Integer(),
  recipient: Type.String(),
  depositor: Type.String(),
  refundRecipient: Type.String(),
  receivedAmount: Type.String({ description: 'Funding observed before the deadline, base units' }),
  refundedAmount: Type.String({ description: 'Refunds sent to refundRecipient, base units' }),
  createdAt: Type.String({ format: 'date-time' }),
  fundedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  publishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  publishTxHash: Type.Union([Type.String(), Type.Null()]),
  failureReason: Type.Union([Type.String(), Type.Null()]),
  transfers: Type.Array(TransferSchema),
});

export const DepositAddressResponse = Type.Object({ data: DepositAddressSchema });

export const VaultParams = Type.Object({
  vaultAddress: Type.String({ description: 'Vault address, any case' }),
});

export const TransferBody = Type.Object(
  {
    vaultAddress: Address,
    from: Address,
    amount: Type.String({ pattern: '^[1-9][0-9]{0,77}$', description: 'Base units' }),
    kind: Type.Optional(
      StringEnum(['plain', 'gasless'] as const, {
        description: 'ERC-20 transfer or EIP-3009 (default plain)',
      }),
    ),
    txHash: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
  },
  { additionalProperties: false },
);
