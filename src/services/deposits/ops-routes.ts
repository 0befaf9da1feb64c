import { Type } from '@sinclair/typebox';
import { registerCredentialRoutes } from '../../platform/credential-routes.ts';
import type { Db } from '../../platform/database.ts';
import type { ServiceApp } from '../../platform/http.ts';
import { StringEnum } from '../../platform/schemas.ts';
import { issueKey, type KeyStore } from './api-keys.ts';
import type { SimulatedChain } from './chain.ts';
import type { DepositService } from './deposit-service.ts';
import { DepositAddressResponse, DepositErrorBody, TransferBody, VaultParams } from './deposits-schemas.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: DepositErrorBody, 401: DepositErrorBody, 404: DepositErrorBody, 409: DepositErrorBody };

/** Operator routes: the chain simulator (transfers into vaults, failures, user refunds) and API keys. */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: { deposits: DepositService; keys: KeyStore; chain: SimulatedChain | undefined; db: Db },
) {
  app.post(
    '/_ops/chain/transfers',
    {
      schema: {
        ...ops,
        operationId: 'opsRecordTransfer',
        summary: 'Simulate a token transfer into a vault',
        description:
          'Records a transfer observed on the source chain at the current time (`plain` ERC-20 transfer or ' +
          '`gasless` EIP-3009). Reaching `amount` before the deadline moves the vault to FUNDING_DETECTED and ' +
          'queues the destination deposit.',
        body: TransferBody,
        response: { 200: DepositAddressResponse, ...errors },
      },
    },
    async (request) => ({
      data: await deps.deposits.recordTransfer({
        vaultAddress: request.body.vaultAddress,
        from: request.body.from,
        amount: BigInt(request.body.amount),
        kind: request.body.kind ?? 'plain',
        txHash: request.body.txHash,
      }),
    }),
  );

  app.post(
    '/_ops/vaults/:vaultAddress/user-refund',
    {
      schema: {
        ...ops,
        operationId: 'opsUserRefund',
        summary: 'Simulate the depositor reclaiming a pending vault (REFUNDED_BY_USER)',
        params: VaultParams,
        response: { 200: DepositAddressResponse, ...errors },
      },
    },
    async (request) => ({ data: await deps.deposits.userRefund(request.params.vaultAddress) }),
  );

  app.put(
    '/_ops/chain/simulation',
    {
      schema: {
        ...ops,
        operationId: 'opsSetChainSimulation',
        summary: 'Make destination deposits fail (or succeed again)',
        body: Type.Object({ failPublishes: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: Type.Object({ failPublishes: Type.Boolean() }), ...errors },
      },
    },
    async (request) => {
      if (!deps.chain) return { failPublishes: false };
      await deps.chain.setSwitch('failPublishes', request.body.failPublishes);
      return { failPublishes: request.body.failPublishes };
    },
  );

  registerCredentialRoutes(app, {
    store: deps.keys,
    db: deps.db,
    attributes: {
      versions: Type.Array(Type.String()),
      rateLimitPerMinute: Type.Union([Type.Integer(), Type.Null()]),
    },
    issueFields: {
      versions: Type.Optional(Type.Array(StringEnum(['v1', 'v2'] as const), { minItems: 0, maxItems: 5 })),
      rateLimitPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    },
    issue: (tx, body) => issueKey(deps.keys, tx, body),
    errorBody: DepositErrorBody,
  });
}
