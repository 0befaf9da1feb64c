import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/schemas.ts';

/** `{status:{error_code, error_message}}`: every error of the service (CoinGecko's body). */
export const CoinErrorBody = Type.Object(
  {
    status: Type.Object({
      error_code: Type.Integer({
        description: 'CoinGecko error code (10002 key missing, 10010 invalid key, ...) or HTTP status',
      }),
      error_message: Type.String(),
    }),
  },
  { $id: 'CoinError', description: 'CoinGecko-style error body' },
);

export const CoinListQuery = Type.Object(
  {
    include_platform: Type.Optional(
      StringEnum(['true', 'false'] as const, {
        description: "Include each coin's `platforms` (platform id -> contract address). Default false.",
      }),
    ),
    status: Type.Optional(
      StringEnum(['active', 'inactive'] as const, {
        description: 'Coins of this status. Default `active`. `inactive` needs a paid-plan key.',
      }),
    ),
    x_coin_demo_api_key: Type.Optional(
      Type.String({ description: 'Demo key as a query parameter (header preferred).' }),
    ),
    x_coin_pro_api_key: Type.Optional(
      Type.String({ description: 'Paid-plan key as a query parameter (header preferred).' }),
    ),
  },
  { additionalProperties: true },
);

export const CoinEntrySchema = Type.Object({
  id: Type.String({
    description: 'Coin id, as other endpoints take it in `id`/`ids`',
    examples: ['usd-coin'],
  }),
  symbol: Type.String({ examples: ['usdc'] }),
  name: Type.String({ examples: ['USDC'] }),
  platforms: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description:
        'Platform id -> token contract address; `{}` for native coins. Present with include_platform=true.',
    }),
  ),
});

export const CoinListResponse = Type.Array(CoinEntrySchema);

/** Operator: a coin list in CoinGecko's `/coins/list?include_platform=true` format. */
export const ImportQuery = Type.Object({
  mode: Type.Optional(
    StringEnum(['merge', 'replace'] as const, {
      description:
        '`merge` (default) upserts the listed coins; `replace` also marks active coins missing from the list inactive.',
    }),
  ),
  status: Type.Optional(
    StringEnum(['active', 'inactive'] as const, {
      description: 'Status given to the listed coins (default active).',
    }),
  ),
});

/**
 * Operator import body: CoinGecko's `/coins/list?include_platform=true` array. Validated as a whole by
 * `parseCoinList` (every problem reported at once, duplicates included), not item by item here.
 */
export const ImportBody = Type.Array(Type.Unknown(), {
  description:
    'CoinGecko `/coins/list?include_platform=true` format: `[{"id","symbol","name","platforms":{platformId: address}}]`',
  examples: [[{ id: 'usd-coin', symbol: 'usdc', name: 'USDC', platforms: { ethereum: '0xa0b8...' } }]],
});

export const ImportResultSchema = Type.Object({
  inserted: Type.Integer(),
  updated: Type.Integer(),
  unchanged: Type.Integer(),
  deactivated: Type.Integer(),
});

export const StatusBody = Type.Object(
  {
    ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 10000 }),
    status: StringEnum(['active', 'inactive'] as const),
  },
  { additionalProperties: false },
);

export const StatusResult = Type.Object({ changed: Type.Integer() });

export const Tier = StringEnum(['demo', 'pro'] as const);

export const SyncRunSchema = Type.Object({
  id: Type.Integer(),
  startedAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  status: StringEnum(['running', 'succeeded', 'failed'] as const),
  inserted: Type.Integer(),
  updated: Type.Integer(),
  deactivated: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const CountsSchema = Type.Object({ active: Type.Integer(), inactive: Type.Integer() });

/** `GET /api/v3/ping` (CoinGecko's server status check). */
export const PingResponse = Type.Object(
  { gecko_says: Type.String({ examples: ['(V3) To the Moon!'] }) },
  { description: 'Server status message' },
);
