/**
 * The pages of the service (issue 16) and their assets, served with the security headers of `ui/` on every answer:
 *
 * | path                         | page                                                                          |
 * | ---------------------------- | ----------------------------------------------------------------------------- |
 * | `/sign-in`                   | password, magic code, SSO, the hosted page (`?next=` a local path)             |
 * | `/sign-in/callback`          | the hosted sign-in's callback (`POST /auth/token`)                            |
 * | `/sign-in/sso/callback`      | SSO's callback (`POST /auth/sso/callback`)                                    |
 * | `/signup`                    | a new signup, the advertiser preview form, the interrupted-signup recovery     |
 * | `/invitations/accept`        | an invitation: the account, joining, the Terms of Service                     |
 * | `/forgot-password`           | asks for a reset link                                                         |
 * | `/reset-password`            | a new password with the mailed link (`#token=`)                               |
 * | `/account`                   | signed in: who, organizations, terms, Commercial Offers                       |
 * | `/account/api-keys`          | signed in: create (shown once), list masked, revoke                           |
 * | `/account/m2m-applications`  | signed in (administrators): applications, their secrets                       |
 * | `/account/connected-apps`    | signed in: connected MCP apps, disconnect                                     |
 * | `/ui/assets/{name}`          | the style sheet, the icon and the scripts                                     |
 *
 * The signed-in pages read the session cookie (no origin rule: reading is safe); without a valid session they answer
 * 303 to `/sign-in?next=<the page>`. Everything that changes state is the pages' scripts calling the JSON API.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceApp } from '../../../platform/http.ts';
import { type Caller, M2M_PERMISSIONS } from '../credentials/index.ts';
import { notFound } from '../media-buying-errors.ts';
import { ErrorEnvelope } from '../media-buying-schemas.ts';
import {
  ASSETS,
  PAGE_HEADERS,
  renderAccountPage,
  renderApiKeysPage,
  renderCallbackPage,
  renderConnectedAppsPage,
  renderForgotPasswordPage,
  renderInvitationPage,
  renderM2mPage,
  renderResetPasswordPage,
  renderSignInPage,
  renderSignupPage,
  type SignedInView,
} from '../ui/index.ts';
import type { MediaBuyingRouteContext } from './context.ts';

const tags = ['pages'];
const page = { description: 'HTML page', type: 'string' } as const;
const toSignIn = { description: 'No session: to `/sign-in?next=<this page>`.', type: 'null' } as const;

/** Where a sign-in goes when the page was opened without a usable `next`. */
const DEFAULT_NEXT = '/account';

/**
 * `next` when it is a path of this site (`/account/api-keys?x`), else {@link DEFAULT_NEXT}: never another origin
 * (`//evil.example`, `/\\evil.example`, `https://...`), only the characters of a URL path, query and fragment (RFC
 * 3986: no space, backslash or control character), so a sign-in never redirects off the site.
 */
function localNext(value: string | undefined): string {
  if (value === undefined || !/^\/(?![/\\])[A-Za-z0-9\-._~!$&'()*+,;=:@%/?#]*$/.test(value))
    return DEFAULT_NEXT;
  return value;
}

/** Sends an HTML page with the security headers. */
function sendPage(reply: FastifyReply, html: string, status = 200) {
  return reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
}

/** Registers the pages and their assets (module comment). */
export function registerPageRoutes(app: ServiceApp, ctx: MediaBuyingRouteContext): void {
  const { organizations, credentials } = ctx.deps;

  /** The signed-in layout's view of a session's caller. */
  const viewOf = async (caller: Caller): Promise<SignedInView> => {
    const user = caller.user!;
    const memberships = await organizations.membershipsOf(user.id);
    return {
      user: { id: user.publicId, name: user.name, email: user.email },
      organization: caller.organization
        ? { id: caller.organization.publicId, name: caller.organization.name, kind: caller.organization.kind }
        : null,
      role: caller.role,
      memberships: memberships.map((m) => ({
        id: m.organization.id,
        name: m.organization.name,
        kind: m.organization.kind,
        status: m.organization.status,
        role: m.role,
      })),
      outstandingTerms: caller.outstandingTerms,
    };
  };

  /** A page of the signed-in area: rendered for the session's caller, or 303 to the sign-in page. */
  const signedInPage = (
    path: string,
    operationId: string,
    summary: string,
    render: (view: SignedInView, caller: Caller) => Promise<string> | string,
  ) =>
    app.get(
      path,
      {
        schema: {
          operationId,
          tags,
          summary,
          description: 'Needs a browser session (cookie `mb_session`); without one, 303 to the sign-in page.',
          security: [],
          produces: ['text/html'],
          response: { 200: page, 303: toSignIn, 400: ErrorEnvelope },
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const caller = await ctx.sessionCaller(request);
        if (caller === null)
          return reply
            .code(303)
            .headers(PAGE_HEADERS)
            .header('location', `/sign-in?next=${encodeURIComponent(path)}`)
            .send(null);
        return sendPage(reply, await render(await viewOf(caller), caller));
      },
    );

  app.get(
    '/sign-in',
    {
      schema: {
        operationId: 'getSignInPage',
        tags,
        summary: 'The sign-in page: password, magic code, SSO',
        security: [],
        querystring: Type.Object({
          next: Type.Optional(
            Type.String({ maxLength: 2000, description: 'Where to go once signed in: a path of this site.' }),
          ),
        }),
        produces: ['text/html'],
        response: { 200: page, 400: ErrorEnvelope },
      },
    },
    async (request, reply) => sendPage(reply, renderSignInPage(localNext(request.query.next))),
  );

  for (const flow of ['auth', 'sso'] as const) {
    app.get(
      flow === 'auth' ? '/sign-in/callback' : '/sign-in/sso/callback',
      {
        schema: {
          operationId: flow === 'auth' ? 'getSignInCallbackPage' : 'getSsoCallbackPage',
          tags,
          summary:
            flow === 'auth'
              ? "The hosted sign-in's redirect URI: completes it with POST /auth/token"
              : "SSO's redirect URI: completes it with POST /auth/sso/callback",
          security: [],
          querystring: Type.Object({
            code: Type.Optional(Type.String({ maxLength: 4096 })),
            state: Type.Optional(Type.String({ maxLength: 512 })),
            iss: Type.Optional(Type.String({ maxLength: 2000 })),
            error: Type.Optional(Type.String({ maxLength: 200 })),
            error_description: Type.Optional(Type.String({ maxLength: 1000 })),
          }),
          produces: ['text/html'],
          response: { 200: page, 400: ErrorEnvelope },
        },
      },
      async (_request, reply) => sendPage(reply, renderCallbackPage(flow)),
    );
  }

  app.get(
    '/signup',
    {
      schema: {
        operationId: 'getSignupPage',
        tags,
        summary: 'The signup page: a new account, the advertiser preview form, or an interrupted signup',
        description:
          'With `token` (the `redirectUrl` of an interrupted signup: `?pending=true&token=mbv_...`) the page resumes ' +
          'that signup; without, it starts one. While buyer signup is waitlisted, choosing Advertiser shows the ' +
          'advertiser preview form.',
        security: [],
        querystring: Type.Object({
          pending: Type.Optional(Type.String({ maxLength: 10 })),
          token: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        produces: ['text/html'],
        response: { 200: page, 400: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const settings = await organizations.settings();
      return sendPage(
        reply,
        renderSignupPage({
          recovery: request.query.token !== undefined,
          buyerSignup: settings.buyerSignup,
          planRollout: settings.planRollout,
        }),
      );
    },
  );

  app.get(
    '/invitations/accept',
    {
      schema: {
        operationId: 'getInvitationPage',
        tags,
        summary: 'The invitation page (the link of an invitation mail)',
        security: [],
        querystring: Type.Object({
          token: Type.Optional(
            Type.String({ maxLength: 200, description: 'The `mbi_...` token of the link.' }),
          ),
        }),
        produces: ['text/html'],
        response: { 200: page, 400: ErrorEnvelope },
      },
    },
    async (_request, reply) => sendPage(reply, renderInvitationPage()),
  );

  app.get(
    '/forgot-password',
    {
      schema: {
        operationId: 'getForgotPasswordPage',
        tags,
        summary: 'Ask for a password-reset link',
        security: [],
        produces: ['text/html'],
        response: { 200: page, 400: ErrorEnvelope },
      },
    },
    async (_request, reply) => sendPage(reply, renderForgotPasswordPage()),
  );

  app.get(
    '/reset-password',
    {
      schema: {
        operationId: 'getResetPasswordPage',
        tags,
        summary: 'Choose a new password with the mailed link (the token is in the fragment: #token=mbp_...)',
        security: [],
        produces: ['text/html'],
        response: { 200: page, 400: ErrorEnvelope },
      },
    },
    async (_request, reply) => sendPage(reply, renderResetPasswordPage()),
  );

  signedInPage(
    '/account',
    'getAccountPage',
    'Your account: organizations, the Terms of Service, Commercial Offers',
    async (view, caller) => {
      const latest = caller.outstandingTerms === null ? undefined : await organizations.latestTerms();
      return renderAccountPage(
        view,
        latest ? { version: latest.version, title: latest.title, body: latest.body } : null,
      );
    },
  );
  signedInPage('/account/api-keys', 'getApiKeysPage', 'Your API keys', (view) => renderApiKeysPage(view));
  signedInPage('/account/m2m-applications', 'getM2mApplicationsPage', 'M2M applications', (view) =>
    renderM2mPage(
      view,
      { tokenEndpoint: credentials.m2m.tokenEndpoint, resource: credentials.m2m.resource },
      M2M_PERMISSIONS,
    ),
  );
  signedInPage('/account/connected-apps', 'getConnectedAppsPage', 'Your connected apps', (view) =>
    renderConnectedAppsPage(view),
  );

  app.get(
    '/ui/assets/:name',
    {
      schema: {
        operationId: 'getPageAsset',
        tags,
        summary: "A page's style sheet, icon or script",
        security: [],
        params: Type.Object({ name: Type.String({ maxLength: 64 }) }),
        produces: ['text/javascript', 'text/css', 'image/svg+xml'],
        response: { 200: { type: 'string' }, 400: ErrorEnvelope, 404: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const asset = ASSETS.get(request.params.name);
      if (!asset) throw notFound('Asset', request.params.name);
      return reply
        .headers({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
        .type(asset.contentType)
        .send(asset.body);
    },
  );
}
