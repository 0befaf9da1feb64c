/**
 * Operator routes of text-message lines: the per-Seller-Account agent-phone-lines switch, assigning, changing and
 * retiring lines (rule 1: there is no self-service number selection), the outbound delivery log (no words, no
 * numbers), and the carrier simulator (an inbound text through the signed webhook; the texts it accepted).
 */
import { Type } from '@sinclair/typebox';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { ServiceApp } from '../../../platform/http.ts';
import { Int4, StringEnum } from '../../../platform/schemas.ts';
import {
  type CarrierSimulator,
  E164_PATTERN,
  signCarrierWebhook,
  type Texting,
} from '../communications/index.ts';
import { OUTBOX_STATUSES, storefronts, textLines, textOutbox } from '../db/schema.ts';
import { badRequest, notFound } from '../media-buying-errors.ts';
import { ErrorEnvelope, PaginationMeta } from '../media-buying-schemas.ts';
import { OPERATOR } from '../organizations/index.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope };
const PublicId = Type.String({ minLength: 1, maxLength: 64 });
/** Largest `take` of a line's outbound delivery log. */
const OUTBOX_MAX_TAKE = 200;

const LineRecord = Type.Object({
  id: Type.String({ description: '`ln_` + 32 hex' }),
  organizationId: Type.String(),
  number: Type.String({ description: 'E.164' }),
  storefrontId: Type.Union([Type.String(), Type.Null()]),
  status: StringEnum(['active', 'retired'] as const),
  assignedAt: Type.String({ format: 'date-time' }),
  retiredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** Registers the operator routes of text-message lines. */
export function registerCommunicationOpsRoutes(
  app: ServiceApp,
  ctx: MediaBuyingRouteContext,
  deps: { texting: Texting; simulator: CarrierSimulator | undefined; webhookSecret: Buffer },
): void {
  const { db, organizations, clock } = ctx.deps;
  const { texting } = deps;

  const view = async (line: typeof textLines.$inferSelect) => {
    const org = await organizations.byId(line.organizationId);
    const [storefront] =
      line.storefrontId === null
        ? []
        : await db
            .select({ publicId: storefronts.publicId })
            .from(storefronts)
            .where(eq(storefronts.id, line.storefrontId));
    return {
      id: line.publicId,
      organizationId: org.publicId,
      number: line.number,
      storefrontId: storefront?.publicId ?? null,
      status: line.status,
      assignedAt: line.assignedAt.toISOString(),
      retiredAt: line.retiredAt?.toISOString() ?? null,
    };
  };

  const sellerAccount = async (publicId: string) => {
    const org = await organizations.byPublicId(publicId);
    if (org.kind !== 'seller')
      throw badRequest('Text lines belong to Seller Accounts.', {
        reason: 'not_a_seller_account',
        field: 'organizationId',
      });
    return org;
  };

  app.put(
    '/_ops/organizations/:organizationId/phone-lines',
    {
      schema: {
        ...ops,
        operationId: 'opsSetPhoneLines',
        summary: "Enable or disable a Seller Account's agent phone lines",
        description:
          'Disabled: the send command answers 409 `phone_lines_disabled`, and inbound texts stay queued for the ' +
          'agent. Enabling hands those texts to the agent: the ones still inside the 15-minute window are answered.',
        params: Type.Object({ organizationId: PublicId }),
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            organizationId: Type.String(),
            enabled: Type.Boolean(),
            resumed: Type.Integer(),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const org = await sellerAccount(request.params.organizationId);
      const resumed = await db.transaction(async (tx) => {
        const n = await texting.setPhoneLines(tx, org.id, request.body.enabled);
        await organizations.audit(
          tx,
          org.id,
          OPERATOR,
          'phone_lines.switched',
          'organization',
          org.publicId,
          {
            enabled: request.body.enabled,
          },
        );
        return n;
      });
      return { organizationId: org.publicId, enabled: request.body.enabled, resumed };
    },
  );

  app.post(
    '/_ops/text-lines',
    {
      schema: {
        ...ops,
        operationId: 'opsAssignTextLine',
        summary: 'Assign a number to a Seller Account as a text line',
        description:
          'The number must be an ordinary +1 number no active line has. `storefrontId` names the storefront whose ' +
          'agent answers inbound texts (a storefront of the same Seller Account).',
        body: Type.Object(
          {
            organizationId: PublicId,
            number: Type.String({ pattern: E164_PATTERN }),
            storefrontId: Type.Optional(Type.Union([PublicId, Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 201: LineRecord, ...errors },
      },
    },
    async (request, reply) => {
      const org = await sellerAccount(request.body.organizationId);
      const line = await db.transaction(async (tx) => {
        const row = await texting.assignLine(tx, org.id, {
          number: request.body.number,
          storefrontId: request.body.storefrontId ?? null,
        });
        await organizations.audit(tx, org.id, OPERATOR, 'text_line.assigned', 'text_line', row.publicId, {
          number: row.number,
        });
        return row;
      });
      return reply.code(201).send(await view(line));
    },
  );

  app.get(
    '/_ops/text-lines',
    {
      schema: {
        ...ops,
        operationId: 'opsListTextLines',
        summary: 'The text lines (of one organization when given), newest first',
        querystring: Type.Object(
          { organizationId: Type.Optional(PublicId) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ lines: Type.Array(LineRecord) }), ...errors },
      },
    },
    async (request) => {
      const org = request.query.organizationId
        ? await organizations.byPublicId(request.query.organizationId)
        : null;
      const rows = await texting.lines(org?.id);
      return { lines: await Promise.all(rows.map(view)) };
    },
  );

  app.patch(
    '/_ops/text-lines/:lineId',
    {
      schema: {
        ...ops,
        operationId: 'opsUpdateTextLine',
        summary: 'Retire a text line, or change its storefront',
        description:
          'Retiring is final: a retired line neither sends (its queued texts are dropped) nor answers.',
        params: Type.Object({ lineId: PublicId }),
        body: Type.Object(
          {
            status: Type.Optional(StringEnum(['active', 'retired'] as const)),
            storefrontId: Type.Optional(Type.Union([PublicId, Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 200: LineRecord, ...errors },
      },
    },
    async (request) => {
      const line = await db.transaction(async (tx) => {
        const row = await texting.updateLine(tx, request.params.lineId, request.body);
        await organizations.audit(
          tx,
          row.organizationId,
          OPERATOR,
          'text_line.updated',
          'text_line',
          row.publicId,
          {
            ...request.body,
          },
        );
        return row;
      });
      return view(line);
    },
  );

  app.get(
    '/_ops/text-lines/:lineId/outbox',
    {
      schema: {
        ...ops,
        operationId: 'opsTextOutbox',
        summary: `A line's outbound delivery log, newest first (no words, no numbers; take 1-${OUTBOX_MAX_TAKE}, default 50)`,
        description:
          "An offset list like the service's other lists: `take` (1-200, default 50) and `skip` (default 0), " +
          "`meta.pagination` `{skip, take, total, hasMore}`, ordered by the text's id, newest first (a total order). " +
          'Offsets count from the newest text: a text queued between two requests moves later pages by one, and ' +
          'with `status`, a text that changes status between them leaves or joins the filtered list.',
        params: Type.Object({ lineId: PublicId }),
        querystring: Type.Object(
          {
            status: Type.Optional(StringEnum(OUTBOX_STATUSES)),
            take: Type.Optional(Int4({ minimum: 1, maximum: OUTBOX_MAX_TAKE, default: 50 })),
            skip: Type.Optional(Int4({ minimum: 0, default: 0 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            texts: Type.Array(
              Type.Object({
                outboxId: Type.String(),
                origin: Type.String(),
                channel: Type.String(),
                status: Type.String(),
                reason: Type.Union([Type.String(), Type.Null()]),
                segments: Type.Integer(),
                createdAt: Type.String({ format: 'date-time' }),
                sentAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
                deliveryStatus: Type.Union([Type.String(), Type.Null()]),
              }),
            ),
            meta: Type.Object({ pagination: PaginationMeta }),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const [line] = await db.select().from(textLines).where(eq(textLines.publicId, request.params.lineId));
      if (!line) throw notFound('Line', request.params.lineId);
      const take = request.query.take ?? 50;
      const skip = request.query.skip ?? 0;
      const where = and(
        eq(textOutbox.lineId, line.id),
        request.query.status ? eq(textOutbox.status, request.query.status) : undefined,
      );
      // The page and its total in one statement (one snapshot: `total` and `hasMore` agree with the rows); past the
      // last row the total is counted on its own.
      const counted = db.select({ total: sql<number>`count(*)::int` }).from(textOutbox).where(where);
      const page = await db
        .select({ row: textOutbox, total: sql<number>`(${counted})` })
        .from(textOutbox)
        .where(where)
        .orderBy(desc(textOutbox.id))
        .limit(take)
        .offset(skip);
      const rows = page.map((p) => p.row);
      const count = page[0] ?? (skip === 0 ? { total: 0 } : (await counted)[0]);
      return {
        texts: rows.map((r) => ({
          outboxId: r.publicId,
          origin: r.origin,
          channel: r.channel,
          status: r.status,
          reason: r.reason,
          segments: r.segments,
          createdAt: r.createdAt.toISOString(),
          sentAt: r.sentAt?.toISOString() ?? null,
          deliveryStatus: r.deliveryStatus,
        })),
        meta: {
          pagination: { skip, take, total: count!.total, hasMore: skip + rows.length < count!.total },
        },
      };
    },
  );

  if (!deps.simulator) return;
  const simulator = deps.simulator;

  app.post(
    '/_ops/carrier/inbound',
    {
      schema: {
        ...ops,
        operationId: 'opsSimulateInboundText',
        summary: 'Carrier simulator: deliver an inbound text to a line through the signed webhook',
        body: Type.Object(
          {
            to: Type.String({ pattern: E164_PATTERN }),
            from: Type.String({ pattern: '^\\+?[0-9]{3,15}$' }),
            text: Type.String({ maxLength: 1600 }),
            messageId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Unknown(), ...errors },
      },
    },
    async (request, reply) => {
      const body = JSON.stringify({
        messageId: request.body.messageId ?? `sim_in_${crypto.randomUUID()}`,
        to: request.body.to,
        from: request.body.from,
        text: request.body.text,
      });
      const timestamp = Math.floor(clock.nowMs() / 1000);
      const res = await app.inject({
        method: 'POST',
        url: '/carrier/webhooks/inbound',
        headers: {
          'content-type': 'application/json',
          'x-carrier-timestamp': String(timestamp),
          'x-carrier-signature': signCarrierWebhook(deps.webhookSecret, timestamp, body),
        },
        payload: body,
      });
      return reply.code(res.statusCode).header('content-type', 'application/json').send(res.body);
    },
  );

  app.get(
    '/_ops/carrier/messages',
    {
      schema: {
        ...ops,
        operationId: 'opsCarrierSimulatorMessages',
        summary: 'Carrier simulator: the texts it accepted in this process (last 1,000), oldest first',
        response: {
          200: Type.Object({
            messages: Type.Array(
              Type.Object({
                carrierMessageId: Type.String(),
                channel: Type.String(),
                from: Type.String(),
                to: Type.String(),
                text: Type.String(),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async () => ({ messages: [...simulator.sent()] }),
  );
}
