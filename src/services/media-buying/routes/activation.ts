/**
 * The activation sandbox over HTTP (spec "Credentials and activation"): the identity provider's anonymous registration
 * and assertion exchange, the probe (`GET`/`HEAD /api/v2/buyer/activation`), the provider binding, the claim by a
 * person, the published contract (`/.well-known/buyer-activation.json`, `/auth.md`) and the operator's stand-ins for
 * the outside world (a provider account connected in a sandbox, the delivery job, a forced operator identity).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../../platform/http.ts';
import { perMinuteLimit } from '../../../platform/rate-limit.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import { activationContract, activationGuide, SANDBOX_STATES } from '../activation/index.ts';
import { simulateDeliveryTask } from '../catalog/index.ts';
import { rateLimited } from '../media-buying-errors.ts';
import { Envelope, ErrorEnvelope, idErrors, security } from '../media-buying-schemas.ts';
import { actingOf } from './buyer-records.ts';
import { Name, PublicId } from './catalog-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** Anonymous registrations per client address per minute. */
export const REGISTRATIONS_PER_MINUTE = 10;

const Nullable = <T extends import('@sinclair/typebox').TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** The activation record (spec "Activation record"). */
export const ActivationRecordSchema = Type.Object({
  schemaVersion: Type.String(),
  activationId: Type.String({ description: '`act_` + 32 hex' }),
  workloadId: Type.String(),
  state: StringEnum(SANDBOX_STATES),
  expiresAt: Type.String({ format: 'date-time' }),
  account: Nullable(
    Type.Object({
      buyerAccountId: Nullable(Type.String()),
      name: Nullable(Type.String()),
      providerAccount: Nullable(
        Type.Object({
          provider: Type.String(),
          providerAccountId: Type.String(),
          connectedAt: Type.String({ format: 'date-time' }),
        }),
      ),
    }),
  ),
  allowance: Type.Object({
    ttlDays: Type.Integer(),
    spendCap: Type.Object({ amount: Type.Number(), currency: Type.String() }),
    grants: Type.Array(Type.String()),
  }),
});

const openErrors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 403: ErrorEnvelope, 429: ErrorEnvelope };

/** Registers the activation routes. */
export function registerActivationRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { sandbox, db, catalog, organizations } = ctx.deps;
  const perAddress = perMinuteLimit(app, {
    max: () => REGISTRATIONS_PER_MINUTE,
    bucket: (request) => `activation-registration:${request.ip}`,
    exceeded: (retryAfterSeconds) =>
      rateLimited('Too many anonymous registrations from this address; retry later.', retryAfterSeconds),
  });

  app.post(
    '/api/v2/activation/registrations',
    {
      onRequest: [...ctx.anonymous, perAddress],
      schema: {
        operationId: 'registerActivationAgent',
        security: [],
        tags: ['activation'],
        summary:
          "Anonymous agent registration: the identity provider's signed assertion (10 minutes, single use)",
        body: Type.Object(
          {
            agentName: Name,
            workloadId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$' }),
            ),
          },
          { additionalProperties: false, examples: [{ agentName: 'Planning agent', workloadId: 'wl-42' }] },
        ),
        response: {
          201: Envelope(
            Type.Object({
              enrolmentId: Type.String(),
              workloadId: Type.String(),
              assertion: Type.String(),
              assertionExpiresAt: Type.String({ format: 'date-time' }),
              tokenEndpoint: Type.String(),
            }),
          ),
          ...openErrors,
        },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      const registered = await sandbox.register({
        agentName: request.body.agentName.trim(),
        workloadId: request.body.workloadId,
      });
      return reply.code(201).send(ctx.ok(registered));
    },
  );

  app.post(
    '/api/v2/activation/token',
    {
      onRequest: [...ctx.anonymous, perAddress],
      schema: {
        operationId: 'exchangeActivationAssertion',
        security: [],
        tags: ['activation'],
        summary:
          'Exchange the assertion for an agent registration credential (`unbound_free`, 30 days) and a claim code',
        body: Type.Object(
          { assertion: Type.String({ minLength: 1, maxLength: 4096 }) },
          { additionalProperties: false, examples: [{ assertion: 'eyJhbGciOiJFUzI1NiJ9.e30.sig' }] },
        ),
        response: {
          200: Envelope(
            Type.Object({
              accessToken: Type.String({ description: '`mbr_...`, shown once' }),
              tokenType: Type.Literal('Bearer'),
              expiresIn: Type.Integer({ description: 'Seconds (30 days)' }),
              activationId: Type.String(),
              state: Type.Literal('unbound_free'),
              claimCode: Type.String({
                description: '`mbc_...` for a person to claim the agent, shown once',
              }),
            }),
          ),
          ...openErrors,
        },
      },
    },
    async (request, reply) => {
      ctx.noStore(reply);
      return ctx.ok(await sandbox.exchange(request.body.assertion));
    },
  );

  /** The sandbox of a request its guard admitted (`sandbox: true`: an agent registration credential). */
  const sandboxOf = (request: FastifyRequest) => ctx.caller(request).sandbox!;

  app.get(
    '/api/v2/buyer/activation',
    {
      onRequest: ctx.authenticated({ sandbox: true, needs: { fn: 'buyer', level: 'read' } }),
      schema: {
        operationId: 'getActivation',
        tags: ['activation'],
        summary: 'The activation probe: the activation record (stable across retries, never a secret)',
        security,
        response: { 200: Envelope(ActivationRecordSchema), ...idErrors },
      },
    },
    async (request, reply) => {
      const { registrationId } = sandboxOf(request);
      reply.header('cache-control', 'no-store');
      return ctx.ok(await sandbox.record(registrationId));
    },
  );

  app.post(
    '/api/v2/buyer/activation/provider-binding',
    {
      onRequest: ctx.authenticated({ sandbox: true, needs: { fn: 'buyer', level: 'read' } }),
      schema: {
        operationId: 'bindActivationProvider',
        tags: ['activation'],
        summary: 'Bind the first provider account connected in the sandbox (no spend) -> bound_free',
        security,
        response: { 200: Envelope(ActivationRecordSchema), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request) => {
      const { registrationId } = sandboxOf(request);
      return ctx.ok(await sandbox.bindProvider(registrationId));
    },
  );

  app.post(
    '/api/v2/buyer/activation/claim',
    {
      onRequest: ctx.authenticated({ user: true, needs: { fn: 'buyer', level: 'write' } }),
      schema: {
        operationId: 'claimActivation',
        tags: ['activation'],
        summary: "Claim an agent's activation into your Buyer Account (an active member) -> customer_bound",
        security,
        body: Type.Object(
          {
            activationId: PublicId,
            claimCode: Type.String({ minLength: 1, maxLength: 100 }),
          },
          {
            additionalProperties: false,
            examples: [{ activationId: 'act_00000000000000000000000000000000', claimCode: 'mbc_...' }],
          },
        ),
        response: { 200: Envelope(ActivationRecordSchema), ...idErrors, 409: ErrorEnvelope },
      },
    },
    async (request) => {
      const caller = ctx.caller(request);
      const acting = actingOf(caller);
      return ctx.ok(
        await sandbox.claim(
          { userId: caller.user!.id, organizationId: acting.organizationId, kind: caller.kind },
          request.body,
        ),
      );
    },
  );

  app.get(
    '/.well-known/buyer-activation.json',
    {
      schema: {
        operationId: 'getBuyerActivationContract',
        security: [],
        tags: ['activation'],
        summary: 'The activation contract (generated from the policy table the service enforces)',
        response: { 200: Type.Unknown() },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return activationContract(ctx.deps.publicUrl());
    },
  );

  app.get(
    '/auth.md',
    {
      schema: {
        operationId: 'getActivationGuide',
        security: [],
        tags: ['activation'],
        summary:
          'The activation guide for people and agents (Markdown, generated from the same policy table)',
        response: { 200: Type.String() },
      },
    },
    async (_request, reply) => {
      reply
        .header('content-type', 'text/markdown; charset=utf-8')
        .header('cache-control', 'public, max-age=300');
      return activationGuide(ctx.deps.publicUrl());
    },
  );

  // ------------------------------------------------------------------ operator stand-ins for the outside world

  const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
  const opsErrors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope };

  app.post(
    '/_ops/activations/:activationId/provider-connections',
    {
      schema: {
        ...ops,
        operationId: 'opsConnectActivationProvider',
        summary: "A provider account connected inside a sandbox (the ad platform's connect callback)",
        params: Type.Object({ activationId: PublicId }),
        body: Type.Object(
          {
            provider: Type.String({ minLength: 1, maxLength: 100 }),
            providerAccountId: Type.String({ minLength: 1, maxLength: 200 }),
          },
          {
            additionalProperties: false,
            examples: [{ provider: 'simulated-ads', providerAccountId: 'acct-1' }],
          },
        ),
        response: {
          200: Type.Object({ activationId: Type.String(), connections: Type.Integer() }),
          ...opsErrors,
        },
      },
    },
    async (request) => sandbox.connectProvider(request.params.activationId, request.body),
  );

  app.post(
    '/_ops/ad-platform/deliver',
    {
      schema: {
        ...ops,
        operationId: 'opsRunDelivery',
        summary: 'Queue the ad-platform delivery job now (it also runs hourly)',
        response: { 202: Type.Object({ queued: Type.Boolean() }), ...opsErrors },
      },
    },
    async (_request, reply) => {
      await simulateDeliveryTask.enqueue(db, {}, { jobKey: 'on-demand' });
      return reply.code(202).send({ queued: true });
    },
  );

  app.put(
    '/_ops/organizations/:organizationId/operator-identity',
    {
      schema: {
        ...ops,
        operationId: 'opsSetOperatorIdentity',
        summary:
          "Set a Buyer Account's operator identity as migrated data (even the platform's own domain, which buying routes then refuse)",
        params: Type.Object({ organizationId: PublicId }),
        body: Type.Object(
          { domain: Type.String({ minLength: 1, maxLength: 253 }), name: Name },
          { additionalProperties: false, examples: [{ domain: 'legacy.example', name: 'Legacy' }] },
        ),
        response: { 200: Type.Object({ domain: Type.String(), name: Type.String() }), ...opsErrors },
      },
    },
    async (request) => {
      const org = await organizations.byPublicId(request.params.organizationId);
      const row = await db.transaction((tx) =>
        catalog.setOperatorIdentity(
          tx,
          { organizationId: org.id, userId: null, kind: 'operator' },
          request.body,
          true,
        ),
      );
      return { domain: row.domain, name: row.name };
    },
  );
}
