/**
 * Operator routes of staged buyer admission (`/_ops/*`, bearer OPERATOR_TOKEN checked by the platform): read the
 * advertiser preview forms, send an admitted organization's setup invitation (with an optional Commercial Offer), and
 * revoke any invitation. Successful answers are plain JSON, as every operator route; errors are the envelope.
 */
import { Type } from '@sinclair/typebox';
import type { ServiceApp } from '../../../platform/http.ts';
import type { Admission } from '../admission/index.ts';
import { Email, ErrorEnvelope } from '../media-buying-schemas.ts';
import { OPERATOR } from '../organizations/index.ts';
import { CommercialOfferRecord, InvitationRecord } from './admission.ts';

const ops = { tags: ['operator'], security: [{ operatorToken: [] }] };
const errors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope };

/** Registers the admission operator routes. */
export function registerAdmissionOpsRoutes(app: ServiceApp, admission: Admission): void {
  app.get(
    '/_ops/advertiser-previews',
    {
      schema: {
        ...ops,
        operationId: 'opsListAdvertiserPreviews',
        summary: 'Advertiser preview forms received, newest first (who asks to be admitted)',
        querystring: Type.Object(
          {
            beforeId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 64, description: 'An `apv_` id.' }),
            ),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            previews: Type.Array(
              Type.Object({
                id: Type.String(),
                workEmail: Type.String(),
                name: Type.String(),
                company: Type.String(),
                message: Type.Union([Type.String(), Type.Null()]),
                signupExperience: Type.Union([Type.String(), Type.Null()]),
                receivedAt: Type.String({ format: 'date-time' }),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async (request) => ({
      previews: await admission.previews.list({
        beforeId: request.query.beforeId,
        limit: request.query.limit ?? 50,
      }),
    }),
  );

  app.post(
    '/_ops/organizations/:organizationId/setup-invitation',
    {
      schema: {
        ...ops,
        operationId: 'opsSendSetupInvitation',
        summary: "Send an admitted organization's administrator the setup invitation",
        description:
          'Mails a single-use link (7 days) that lets the recipient create an account (or sign in) and join as an ' +
          'administrator, even while public buyer signup is waitlisted. 409 `CONFLICT` when the organization is not ' +
          'admitted (`organization_not_admitted`), the email is a member (`already_member`) or has an open ' +
          'invitation (`invitation_pending`). A `commercialOffer` (pending on arrival; joining does not accept it) ' +
          'attaches only to the first administrator invitation of a Buyer Account, one nobody has joined yet ' +
          '(`not_a_buyer_account`, `not_first_administrator_invitation`; `offer_pending` while another open ' +
          'invitation carries one).',
        params: Type.Object({ organizationId: Type.String({ minLength: 1, maxLength: 64 }) }),
        body: Type.Object(
          {
            email: Email,
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' })),
            commercialOffer: Type.Optional(
              Type.Object(
                {
                  title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
                  terms: Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S' }),
                },
                { additionalProperties: false },
              ),
            ),
          },
          {
            additionalProperties: false,
            examples: [
              {
                email: 'ada@acme-outdoor.example',
                name: 'Ada Lovelace',
                commercialOffer: {
                  title: 'Launch pricing',
                  terms: 'Platform fee of 8% of media spend for the first 12 months.',
                },
              },
            ],
          },
        ),
        response: {
          201: Type.Object({
            invitation: InvitationRecord,
            commercialOffer: Type.Union([CommercialOfferRecord, Type.Null()]),
          }),
          ...errors,
          409: ErrorEnvelope,
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await admission.invitations.createSetup(request.params.organizationId, request.body)),
  );

  app.post(
    '/_ops/invitations/:invitationId/revoke',
    {
      config: { optionalJsonBody: true },
      schema: {
        ...ops,
        operationId: 'opsRevokeInvitation',
        summary: 'Revoke any invitation (its link stops at once; a pending offer it carries is withdrawn)',
        params: Type.Object({ invitationId: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: InvitationRecord, ...errors, 409: ErrorEnvelope },
      },
    },
    async (request) => admission.invitations.revoke(null, request.params.invitationId, OPERATOR),
  );
}
