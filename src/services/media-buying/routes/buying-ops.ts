/**
 * Operator routes of the ad-platform layer (part 3): the simulator's outcome faults per storefront or sales agent,
 * a storefront's buying settings (approval hold, managed ad server, supported targeting, destination profile), and
 * the approval of a held media buy (dispatch, or `flight_window_elapsed`). Plain JSON answers; errors are the envelope.
 */
import { Type } from '@sinclair/typebox';
import { and, eq } from 'drizzle-orm';
import type { ServiceApp } from '../../../platform/http.ts';
import { StringEnum } from '../../../platform/schemas.ts';
import type { MediaBuyDesk } from '../buying/index.ts';
import {
  adPlatformFaults,
  FAULT_SCOPES,
  MUTATION_FAULTS,
  salesAgents,
  storefrontBuyingSettings,
  storefronts,
} from '../db/schema.ts';
import { notFound, semanticValidation } from '../media-buying-errors.ts';
import { ErrorEnvelope } from '../media-buying-schemas.ts';
import { PublicId } from './catalog-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope, 422: ErrorEnvelope };
const Code = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' });
const Message = Type.String({ minLength: 1, maxLength: 500 });

const Rejection = Type.Object(
  {
    code: Code,
    message: Message,
    recovery: StringEnum(['transient', 'correctable', 'terminal'] as const),
  },
  { additionalProperties: false },
);

const Faults = Type.Object(
  {
    create: Type.Optional(StringEnum(MUTATION_FAULTS)),
    update: Type.Optional(StringEnum(MUTATION_FAULTS)),
    rejectCreate: Type.Optional(Rejection),
    discovery: Type.Optional(Rejection),
    creativeRejections: Type.Optional(
      Type.Array(
        Type.Object(
          { creativeId: Type.String({ minLength: 1, maxLength: 255 }), code: Code, message: Message },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
    fxRateGaps: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Z]{3}/[A-Z]{3}$' }), { maxItems: 50 })),
    unresolvedSpend: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ update: 'unknown' }] },
);

const Settings = Type.Object(
  {
    approvalRequired: Type.Boolean(),
    managed: Type.Boolean(),
    supportedTargeting: Type.Union([
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 }),
      Type.Null(),
    ]),
    destinationProfile: Type.Union([
      Type.Object(
        {
          vastVersions: Type.Array(Type.String({ minLength: 1, maxLength: 8 }), { maxItems: 10 }),
          renditions: Type.Array(Type.String({ pattern: '^\\d{1,5}x\\d{1,5}$' }), { maxItems: 50 }),
          certifiedFormatIds: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 50 }),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  {
    additionalProperties: false,
    examples: [
      { approvalRequired: true, managed: false, supportedTargeting: null, destinationProfile: null },
    ],
  },
);

/** Registers the operator routes of the ad-platform layer. */
export function registerBuyingOpsRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  desk: MediaBuyDesk,
): void {
  const { db, clock } = ctx.deps;

  /** The internal id of a storefront or sales agent. @throws ApiError 404. */
  const scopeId = async (kind: (typeof FAULT_SCOPES)[number], publicId: string) => {
    const table = kind === 'storefront' ? storefronts : salesAgents;
    const [row] = await db.select({ id: table.id }).from(table).where(eq(table.publicId, publicId));
    if (!row) throw notFound(kind === 'storefront' ? 'Storefront' : 'Sales agent', publicId);
    return row.id;
  };
  const FaultParams = Type.Object({ scope: StringEnum(FAULT_SCOPES), id: PublicId });

  app.put(
    '/_ops/ad-platform-faults/:scope/:id',
    {
      schema: {
        ...ops,
        operationId: 'opsSetAdPlatformFaults',
        summary:
          'Set the simulator outcome faults of a storefront or sales agent (an empty object clears them)',
        params: FaultParams,
        body: Faults,
        response: { 200: Faults, ...errors },
      },
    },
    async (request) => {
      const id = await scopeId(request.params.scope, request.params.id);
      if (request.params.scope === 'sales_agent' && request.body.discovery)
        throw semanticValidation([
          {
            field: 'discovery',
            location: 'body',
            message: "is a storefront's fault: product discovery answers per storefront",
          },
        ]);
      const now = clock.now();
      await db
        .insert(adPlatformFaults)
        .values({ scopeKind: request.params.scope, scopeId: id, faults: request.body, updatedAt: now })
        .onConflictDoUpdate({
          target: [adPlatformFaults.scopeKind, adPlatformFaults.scopeId],
          set: { faults: request.body, updatedAt: now },
        });
      return request.body;
    },
  );

  app.get(
    '/_ops/ad-platform-faults/:scope/:id',
    {
      schema: {
        ...ops,
        operationId: 'opsGetAdPlatformFaults',
        summary: 'The simulator outcome faults of a storefront or sales agent',
        params: FaultParams,
        response: { 200: Faults, ...errors },
      },
    },
    async (request) => {
      const id = await scopeId(request.params.scope, request.params.id);
      const [row] = await db
        .select()
        .from(adPlatformFaults)
        .where(and(eq(adPlatformFaults.scopeKind, request.params.scope), eq(adPlatformFaults.scopeId, id)));
      return row?.faults ?? {};
    },
  );

  app.put(
    '/_ops/storefronts/:storefrontId/buying-settings',
    {
      schema: {
        ...ops,
        operationId: 'opsSetStorefrontBuyingSettings',
        summary:
          "Set a storefront's buying settings (approval hold, managed ad server, targeting, destination profile)",
        params: Type.Object({ storefrontId: PublicId }),
        body: Settings,
        response: { 200: Settings, ...errors },
      },
    },
    async (request) => {
      const id = await scopeId('storefront', request.params.storefrontId);
      const now = clock.now();
      const values = { ...request.body, updatedAt: now };
      await db
        .insert(storefrontBuyingSettings)
        .values({ storefrontId: id, ...values })
        .onConflictDoUpdate({ target: storefrontBuyingSettings.storefrontId, set: values });
      return request.body;
    },
  );

  app.post(
    '/_ops/media-buys/:mediaBuyId/approval',
    {
      schema: {
        ...ops,
        operationId: 'opsApproveMediaBuy',
        summary: 'Approve a media buy held for approval: dispatch it, or fail it with flight_window_elapsed',
        params: Type.Object({ mediaBuyId: PublicId }),
        response: {
          200: Type.Object({
            state: Type.String(),
            error: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const result = await desk.approve(request.params.mediaBuyId);
      if (!result) throw notFound('Held media buy', request.params.mediaBuyId);
      return result;
    },
  );
}
