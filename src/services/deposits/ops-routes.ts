import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../platform/http.ts';
import type { DepositKeyService } from './api-keys.ts';
import type { SimulatedChain } from './chain.ts';
import type { DepositService } from './deposit-service.ts';
import {
  DepositAddressResponse,
  DepositErrorBody,
  IssuedKeySchema,
  IssueKeyBody,
  KeyRecordSchema,
  TransferBody,
  VaultParams,
} from './deposits-schemas.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: DepositErrorBody, 401: DepositErrorBody, 404: DepositErrorBody, 409: DepositErrorBody };

/** Operator routes: the chain simulator (transfers into vaults, failures, user refunds) and API keys. */
export async function registerOpsRoutes(
  app: ServiceApp,
  deps: { deposits: DepositService; keys: DepositKeyService; chain: SimulatedChain | undefined },
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

  app.post(
    '/_ops/keys',
    {
      schema: {
        ...ops,
        operationId: 'opsIssueKey',
        summary: 'Issue an API key (shown once)',
        body: IssueKeyBody,
        response: { 201: IssuedKeySchema, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.keys.issue(request.body)),
  );

  app.get(
    '/_ops/keys',
    {
      schema: {
        ...ops,
        operationId: 'opsListKeys',
        summary: 'List API keys (never the keys themselves)',
        response: { 200: Type.Object({ keys: Type.Array(KeyRecordSchema) }), 401: DepositErrorBody },
      },
    },
    async () => ({ keys: await deps.keys.list() }),
  );

  app.post(
    '/_ops/keys/:id/revoke',
    {
      schema: {
        ...ops,
        operationId: 'opsRevokeKey',
        summary: 'Revoke an API key (every instance at once)',
        params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
        response: { 200: KeyRecordSchema, ...errors },
      },
    },
    async (request) => deps.keys.revoke(request.params.id),
  );
}
