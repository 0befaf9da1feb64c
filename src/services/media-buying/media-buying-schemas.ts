/**
 * TypeBox schemas shared by the media-buying routes: the REST envelope (spec "Resources and fields", REST response
 * envelope), the error object, pagination meta, and the records of organizations, users and credentials. Field names
 * are camelCase, as the anchor's REST API has them.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/schemas.ts';
import { KEY_PERMISSIONS, MEMBERSHIP_ROLES, ORGANIZATION_KINDS, ORGANIZATION_STATUSES } from './db/schema.ts';

/** The error object of the envelope. */
export const ErrorObject = Type.Object({
  code: Type.String({
    description: "Machine-readable code of the spec's error table (`VALIDATION_ERROR`, ...).",
  }),
  message: Type.String({ description: 'Human-readable text, safe to show.' }),
  field: Type.Optional(Type.String({ description: 'The field of a validation error.' })),
  details: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'Structured extras: `issues` (every validation issue), retry hints, conflicting ids.',
    }),
  ),
});

/** A failure: `{data: null, error}`. */
export const ErrorEnvelope = Type.Object({ data: Type.Null(), error: ErrorObject });

/** A success: `{data, error: null}`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ data, error: Type.Null() });
}

/** `meta.pagination` of offset lists (spec "Pagination meta"). */
export const PaginationMeta = Type.Object({
  skip: Type.Integer({ minimum: 0 }),
  take: Type.Integer({ minimum: 0 }),
  total: Type.Integer({ minimum: 0 }),
  hasMore: Type.Boolean(),
});

/** A list success: `{data: [...], error: null, meta: {pagination}}`. */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    error: Type.Null(),
    meta: Type.Object({ pagination: PaginationMeta }),
  });
}

/** Error answers every authenticated route may give. */
export const authErrors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  429: ErrorEnvelope,
};

/** Error answers of a route that takes an id. */
export const idErrors = { ...authErrors, 404: ErrorEnvelope };

/** The security requirement of every authenticated route: a bearer credential or the browser session cookie. */
export const security: { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, { sessionCookie: [] }];

/** An email address (lower-cased by the service), at most 254 characters (RFC 5321). */
export const Email = Type.String({ format: 'email', maxLength: 254 });

/** A user as others see it. */
export const UserRecord = Type.Object({
  id: Type.String({ description: '`usr_` + 32 hex' }),
  email: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

/** An organization (Buyer Account or Seller Account). */
export const OrganizationRecord = Type.Object({
  id: Type.String({ description: '`org_` + 32 hex' }),
  kind: StringEnum(ORGANIZATION_KINDS),
  name: Type.String(),
  status: StringEnum(ORGANIZATION_STATUSES),
  createdAt: Type.String({ format: 'date-time' }),
  admittedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** A membership of the caller (`GET /auth/me`) or of an organization (members list). */
export const MembershipRecord = Type.Object({
  organization: OrganizationRecord,
  role: StringEnum(MEMBERSHIP_ROLES),
  joinedAt: Type.String({ format: 'date-time' }),
});

/** A user API key as listed: masked (`mbu_…abcd`), never the secret. */
export const UserApiKeyRecord = Type.Object({
  id: Type.String({ description: '`uak_` + 32 hex' }),
  label: Type.Union([Type.String(), Type.Null()]),
  maskedKey: Type.String({ description: 'The prefix and the last four characters.' }),
  permissions: Type.Array(StringEnum(KEY_PERMISSIONS)),
  organizationId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
