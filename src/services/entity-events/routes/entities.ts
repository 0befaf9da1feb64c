/**
 * Per entity type (businesses, prospects): v2 enrollments, fetch-events, and the earlier v1 enrollments.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import { parsePage } from '../../../platform/pagination.ts';
import type { EntityType } from '../catalogue.ts';
import {
  EnrollmentParams,
  EnrollmentResponse,
  EnrollmentSchema,
  EventSchema,
  enrollmentBody,
  fetchEventsBody,
  PageQuery,
  PageSchema,
  updateEnrollmentBody,
  v1EnrollmentBody,
  withContext,
} from '../entity-events-schemas.ts';
import { type EntityEventsRouteContext, errors, ok, pageOut, security } from './context.ts';

/** Registers the enrollment and fetch-events routes of both entity types. */
export function registerEntityRoutes(app: ServiceApp, ctx: EntityEventsRouteContext) {
  const { authenticate, who } = ctx;
  for (const entity of ['business', 'prospect'] as const satisfies readonly EntityType[]) {
    const plural = entity === 'business' ? 'businesses' : 'prospects';
    const Entity = entity === 'business' ? 'Business' : 'Prospect';
    const idsKey = `${entity}_ids`;
    const base = `/v2/${plural}/events/enrollments`;

    app.post(
      base,
      {
        onRequest: authenticate,
        schema: {
          operationId: `create${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Enroll ${plural} (up to 1,000 ids per request) for event types, delivered to a webhook`,
          description:
            '`webhook_id` missing, of another scope or not active: 422; unknown: 404. Event types are checked ' +
            'against the catalogue of this entity type (400 `unknown_event_type`).',
          security,
          body: enrollmentBody(entity),
          response: { 201: EnrollmentResponse, ...errors },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown> & {
          enrollment_key: string;
          event_types: string[];
        };
        const created = await ctx.enrollments.create(who(request), entity, {
          enrollment_key: body.enrollment_key,
          webhook_id: body.webhook_id,
          event_types: body.event_types,
          ids: body[idsKey],
        });
        return reply.code(201).send(ok(request, created));
      },
    );

    app.get(
      base,
      {
        onRequest: authenticate,
        schema: {
          operationId: `list${Entity}Enrollments`,
          tags: ['enrollments'],
          summary: `List ${entity} enrollments (oldest first, paged)`,
          security,
          querystring: PageQuery,
          response: {
            200: withContext({ enrollments: Type.Array(EnrollmentSchema), page: PageSchema }),
            ...errors,
          },
        },
      },
      async (request) => {
        const r = await ctx.enrollments.list(who(request), entity, parsePage(request.query));
        return ok(request, { enrollments: r.items, page: pageOut(r.page) });
      },
    );

    app.get(
      `${base}/:enrollment_id`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `get${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Read a ${entity} enrollment`,
          security,
          params: EnrollmentParams,
          response: { 200: EnrollmentResponse, ...errors },
        },
      },
      async (request) =>
        ok(request, await ctx.enrollments.get(who(request), entity, request.params.enrollment_id)),
    );

    app.patch(
      `${base}/:enrollment_id`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `update${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Update a ${entity} enrollment (webhook, key, event types, entity list)`,
          description:
            `\`${idsKey}\` replaces the list; \`add_${idsKey}\` / \`remove_${idsKey}\` change it (each at most ` +
            '1,000). Re-pointing a paused enrollment at an active webhook makes it active again.',
          security,
          params: EnrollmentParams,
          body: updateEnrollmentBody(entity),
          response: { 200: EnrollmentResponse, ...errors },
        },
      },
      async (request) => {
        const body = request.body as Record<string, unknown> & {
          enrollment_key?: string;
          event_types?: string[];
        };
        return ok(
          request,
          await ctx.enrollments.update(who(request), entity, request.params.enrollment_id, {
            enrollment_key: body.enrollment_key,
            webhook_id: body.webhook_id,
            event_types: body.event_types,
            ids: body[idsKey],
            addIds: body[`add_${idsKey}`],
            removeIds: body[`remove_${idsKey}`],
          }),
        );
      },
    );

    app.delete(
      `${base}/:enrollment_id`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `delete${Entity}Enrollment`,
          tags: ['enrollments'],
          summary: `Delete a ${entity} enrollment`,
          security,
          params: EnrollmentParams,
          response: { 200: withContext({ enrollment_id: Type.String() }), ...errors },
        },
      },
      async (request) =>
        ok(request, await ctx.enrollments.delete(who(request), entity, request.params.enrollment_id)),
    );

    app.post(
      `/v2/${plural}/events`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `fetch${Entity}Events`,
          tags: ['events'],
          summary: `Fetch stored ${entity} events for up to 40 ids, filtered by type and time, newest first`,
          security,
          body: fetchEventsBody(entity),
          response: { 200: withContext({ events: Type.Array(EventSchema), page: PageSchema }), ...errors },
        },
      },
      async (request) => {
        const body = request.body as Record<string, unknown> & {
          event_types?: string[];
          from?: string;
          to?: string;
          limit?: number;
          offset?: number;
        };
        const page = parsePage({ limit: body.limit, offset: body.offset }, { defaultLimit: 50 });
        const r = await ctx.events.fetch(
          entity,
          {
            ids: body[idsKey],
            idsField: idsKey,
            event_types: body.event_types,
            from: body.from,
            to: body.to,
          },
          page,
        );
        return ok(request, { events: r.items, page: pageOut(r.page) });
      },
    );

    // ---- v1 (earlier version): enrollments without webhook_id, delivered to the legacy partner webhook ----
    app.post(
      `/v1/${plural}/events/enrollments`,
      {
        onRequest: authenticate,
        schema: {
          operationId: `createV1${Entity}Enrollment`,
          tags: ['v1'],
          summary: `v1: enroll ${plural}; delivered to the partner-level legacy webhook`,
          security,
          body: v1EnrollmentBody(entity),
          response: { 201: EnrollmentResponse, ...errors },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown> & {
          enrollment_key: string;
          event_types: string[];
        };
        const created = await ctx.enrollments.create(
          who(request),
          entity,
          { enrollment_key: body.enrollment_key, event_types: body.event_types, ids: body[idsKey] },
          'v1',
        );
        return reply.code(201).send(ok(request, created));
      },
    );
  }
}
