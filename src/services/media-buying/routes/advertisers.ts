/**
 * Advertisers of the caller's Buyer Account (spec "Credentials and activation": `GET, HEAD /api/v2/buyer/advertisers`
 * and `/api/v2/buyer/advertisers/:id`), and their creation. HEAD answers as GET without a body (Fastify's own HEAD
 * routes). Lists are offset lists: `take` (1-100, default 50) and `skip`, `meta.pagination`, ordered by creation (id),
 * so pages never repeat or skip a row.
 */
import { Type } from '@sinclair/typebox';
import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4 } from '../../../platform/schemas.ts';
import { advertisers } from '../db/schema.ts';
import { notFound } from '../media-buying-errors.ts';
import { Envelope, idErrors, ListEnvelope, security } from '../media-buying-schemas.ts';
import type { MediaBuyingRouteContext } from './context.ts';

/** Largest `take` of the advertiser list. */
export const ADVERTISERS_MAX_TAKE = 100;

const Advertiser = Type.Object({
  id: Type.String({ description: '`adv_` + 32 hex' }),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

function view(row: typeof advertisers.$inferSelect) {
  return { id: row.publicId, name: row.name, createdAt: row.createdAt.toISOString() };
}

/** Registers the advertiser routes. */
export function registerAdvertiserRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { db, organizations } = ctx.deps;
  const read = ctx.authenticated({ needs: { fn: 'buyer', level: 'read' } });
  // The list is the hot read of the REST API: prepared once.
  const listed = and(
    eq(advertisers.organizationId, sql.placeholder('orgId')),
    isNull(advertisers.archivedAt),
  );
  const advertiserPage = db
    .select({ row: advertisers, total: sql<number>`count(*) over ()`.mapWith(Number) })
    .from(advertisers)
    .where(listed)
    .orderBy(asc(advertisers.id))
    .limit(sql.placeholder('take'))
    .offset(sql.placeholder('skip'))
    .prepare('media_buying_advertiser_page');
  const advertiserCount = db
    .select({ n: count() })
    .from(advertisers)
    .where(listed)
    .prepare('media_buying_advertiser_count');

  app.get(
    '/api/v2/buyer/advertisers',
    {
      onRequest: read,
      schema: {
        operationId: 'listAdvertisers',
        tags: ['buyer'],
        summary: 'The advertisers of your Buyer Account',
        security,
        querystring: Type.Object(
          {
            take: Type.Optional(Int4({ minimum: 1, maximum: ADVERTISERS_MAX_TAKE, default: 50 })),
            skip: Type.Optional(Int4({ minimum: 0, default: 0 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Advertiser), ...idErrors },
      },
    },
    async (request) => {
      // An unbound activation sandbox acts in no organization: id 0 matches no row.
      const orgId = ctx.caller(request).organization?.id ?? 0;
      const take = request.query.take ?? 50;
      const skip = request.query.skip ?? 0;
      // One query: the page and the total (a window count); past the last row the count is asked on its own.
      const page = await advertiserPage.execute({ orgId, take, skip });
      const rows = page.map((p) => p.row);
      const total = page[0]?.total ?? (skip === 0 ? 0 : (await advertiserCount.execute({ orgId }))[0]!.n);
      return ctx.list(rows.map(view), { skip, take, total });
    },
  );

  app.get(
    '/api/v2/buyer/advertisers/:advertiserId',
    {
      onRequest: read,
      schema: {
        operationId: 'getAdvertiser',
        tags: ['buyer'],
        summary: "One advertiser (404 for another account's, as for an unknown id)",
        security,
        params: Type.Object({ advertiserId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: Envelope(Advertiser), ...idErrors },
      },
    },
    async (request) => {
      // An unbound activation sandbox acts in no organization: id 0 matches no row.
      const orgId = ctx.caller(request).organization?.id ?? 0;
      const [row] = await db
        .select()
        .from(advertisers)
        .where(
          and(
            eq(advertisers.publicId, request.params.advertiserId),
            eq(advertisers.organizationId, orgId),
            isNull(advertisers.archivedAt),
          ),
        )
        .limit(1);
      if (!row) throw notFound('Advertiser', request.params.advertiserId);
      return ctx.ok(view(row));
    },
  );

  app.post(
    '/api/v2/buyer/advertisers',
    {
      onRequest: ctx.authenticated({ needs: { fn: 'buyer', level: 'write' } }),
      schema: {
        operationId: 'createAdvertiser',
        tags: ['buyer'],
        summary: 'Create an advertiser in your Buyer Account',
        security,
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }) },
          { additionalProperties: false, examples: [{ name: 'Acme Outdoor' }] },
        ),
        response: { 201: Envelope(Advertiser), ...idErrors },
      },
    },
    async (request, reply) => {
      const caller = ctx.caller(request);
      const row = await db.transaction((tx) =>
        organizations.createAdvertiser(tx, caller.organization!.id, request.body.name.trim(), {
          userId: caller.user?.id ?? null,
          kind: caller.kind,
        }),
      );
      return reply.code(201).send(ctx.ok(view(row)));
    },
  );
}
