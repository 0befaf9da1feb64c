import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import {
  credentialColumns,
  expiringCredentialColumns,
  signingKeyColumns,
} from '../../../platform/db/columns.ts';

/**
 * Tables of the media-buying service (spec document 000), Postgres schema `media_buying`: organizations and people,
 * the built-in identity provider, every kind of credential, mail, and the records of parts 2-4 as they land.
 *
 * Conventions: internal ids are `bigint` identities; ids shown to callers are `publicId` text with a prefix
 * (`org_`, `usr_`, `adv_`, `sf_`, ... + 32 hex, `key_` for organization-owned keys); instants are `timestamptz`.
 */
export const mediaBuyingSchema = pgSchema('media_buying');

const id = () => bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity();
const ref = (name: string) => bigint(name, { mode: 'number' });
const at = (name: string) => timestamp(name, { withTimezone: true });

/** Roles of a membership: `admin` manages the organization (members, keys, applications); `member` uses it. */
export const MEMBERSHIP_ROLES = ['admin', 'member'] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];

/** Organization kinds: Buyer Accounts (advertisers, agencies) and Seller Accounts (media companies). */
export const ORGANIZATION_KINDS = ['buyer', 'seller'] as const;
export type OrganizationKind = (typeof ORGANIZATION_KINDS)[number];

/**
 * Organization statuses: `waitlisted` (a Buyer Account created by the operator, not admitted yet: nobody can sign in
 * to it), `admitted` (in use), `suspended` (every credential of it stops).
 */
export const ORGANIZATION_STATUSES = ['waitlisted', 'admitted', 'suspended'] as const;
export type OrganizationStatus = (typeof ORGANIZATION_STATUSES)[number];

/** Buyer Accounts and Seller Accounts. */
export const organizations = mediaBuyingSchema.table(
  'organizations',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    kind: text('kind', { enum: ORGANIZATION_KINDS }).notNull(),
    name: text('name').notNull(),
    status: text('status', { enum: ORGANIZATION_STATUSES }).notNull(),
    createdAt: at('created_at').notNull(),
    admittedAt: at('admitted_at'),
    suspendedAt: at('suspended_at'),
  },
  (t) => [index('organizations_kind_idx').on(t.kind, t.status)],
);

/**
 * The identity provider's people (the credential control plane): a verified email, an optional argon2id password
 * hash, and a stable `subject` (`sub` of its assertions). A platform account ({@link users}) is made from an identity
 * at signup; an identity without one is an interrupted signup.
 */
export const identities = mediaBuyingSchema.table('identities', {
  id: id(),
  subject: text('subject').notNull().unique(),
  /** Lower-cased. */
  email: text('email').notNull().unique(),
  name: text('name'),
  emailVerifiedAt: at('email_verified_at'),
  /** argon2id PHC string, or null for an identity that signs in by code or SSO only. */
  passwordHash: text('password_hash'),
  passwordChangedAt: at('password_changed_at'),
  createdAt: at('created_at').notNull(),
});

/** An external OpenID Connect identity (issuer + subject) linked to an identity, by verified email at first use. */
export const ssoLinks = mediaBuyingSchema.table(
  'sso_links',
  {
    id: id(),
    identityId: ref('identity_id')
      .notNull()
      .references(() => identities.id, { onDelete: 'cascade' }),
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [uniqueIndex('sso_links_issuer_subject_uq').on(t.issuer, t.subject)],
);

/** Platform accounts (`usr_`): one per identity, with the organization the user works in now. */
export const users = mediaBuyingSchema.table('users', {
  id: id(),
  publicId: text('public_id').notNull().unique(),
  identityId: ref('identity_id')
    .notNull()
    .unique()
    .references(() => identities.id),
  /** Lower-cased, as the identity's. */
  email: text('email').notNull().unique(),
  name: text('name').notNull(),
  activeOrganizationId: ref('active_organization_id').references(() => organizations.id),
  createdAt: at('created_at').notNull(),
  disabledAt: at('disabled_at'),
});

/** Who belongs to which organization, with which role; a removed membership keeps its row (`removedAt`). */
export const memberships = mediaBuyingSchema.table(
  'memberships',
  {
    id: id(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    userId: ref('user_id')
      .notNull()
      .references(() => users.id),
    role: text('role', { enum: MEMBERSHIP_ROLES }).notNull(),
    createdAt: at('created_at').notNull(),
    removedAt: at('removed_at'),
  },
  (t) => [
    uniqueIndex('memberships_active_uq').on(t.organizationId, t.userId).where(sql`${t.removedAt} is null`),
    index('memberships_user_idx').on(t.userId),
  ],
);

/** Advertisers (`adv_`) of a Buyer Account. Part 2 adds their accounts, campaigns and media buys. */
export const advertisers = mediaBuyingSchema.table(
  'advertisers',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    createdAt: at('created_at').notNull(),
    archivedAt: at('archived_at'),
  },
  (t) => [index('advertisers_org_idx').on(t.organizationId, t.id)],
);

/** Storefront statuses (spec "Events", rule 4: an archived or replaced storefront's line never replies). */
export const STOREFRONT_STATUSES = ['active', 'archived', 'replaced'] as const;

/** Storefronts (`sf_`) of a Seller Account. Part 2 adds their sales agents and products. */
export const storefronts = mediaBuyingSchema.table(
  'storefronts',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    status: text('status', { enum: STOREFRONT_STATUSES }).notNull(),
    /** True while the storefront runs in adapter mode (its agent does not answer texts). */
    adapterMode: boolean('adapter_mode').notNull().default(false),
    /** ISO 4217. */
    currency: text('currency').notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('storefronts_org_idx').on(t.organizationId, t.id)],
);

/** Terms of Service versions; the newest `publishedAt` is the one every member must have accepted to mutate. */
export const termsVersions = mediaBuyingSchema.table('terms_versions', {
  id: id(),
  version: text('version').notNull().unique(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  publishedAt: at('published_at').notNull(),
});

/** Who accepted which terms version, when. */
export const termsAcceptances = mediaBuyingSchema.table(
  'terms_acceptances',
  {
    userId: ref('user_id')
      .notNull()
      .references(() => users.id),
    termsVersionId: ref('terms_version_id')
      .notNull()
      .references(() => termsVersions.id),
    acceptedAt: at('accepted_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.termsVersionId] })],
);

/** Alpha features an organization was opted into (by the operator: "opt in through support"). */
export const alphaOptIns = mediaBuyingSchema.table(
  'alpha_opt_ins',
  {
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    feature: text('feature').notNull(),
    optedInAt: at('opted_in_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.feature] })],
);

/**
 * Platform-wide settings the operator changes at run time: `buyerSignup` (`waitlisted` | `open`), `planRollout`
 * (`closed` | `open`), `securitySignOutAt` (the last platform-wide security sign-out).
 */
export const platformSettings = mediaBuyingSchema.table('platform_settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: at('updated_at').notNull(),
});

/** Advertiser preview forms sent while buyer signup is waitlisted: a receipt is mailed, nothing else is granted. */
export const advertiserPreviews = mediaBuyingSchema.table(
  'advertiser_previews',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    /** Lower-cased. */
    workEmail: text('work_email').notNull(),
    name: text('name').notNull(),
    company: text('company').notNull(),
    /** What the company wants to do (free text, optional). */
    message: text('message'),
    signupExperience: text('signup_experience'),
    createdAt: at('created_at').notNull(),
    receiptMailId: ref('receipt_mail_id'),
    /** The client address that sent the form (the per-address throttle); null for loopback clients. */
    clientAddress: text('client_address'),
  },
  (t) => [
    index('advertiser_previews_email_idx').on(t.workEmail, t.createdAt),
    index('advertiser_previews_address_idx').on(t.clientAddress, t.createdAt),
  ],
);

/** Commercial Offer statuses: pending on arrival; accepting is a separate step from joining. */
export const OFFER_STATUSES = ['pending', 'accepted', 'declined', 'withdrawn'] as const;

/** Commercial Offers (`ofr_`) attached to a first buyer-administrator invitation. */
export const commercialOffers = mediaBuyingSchema.table(
  'commercial_offers',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    title: text('title').notNull(),
    terms: text('terms').notNull(),
    status: text('status', { enum: OFFER_STATUSES }).notNull(),
    createdAt: at('created_at').notNull(),
    decidedAt: at('decided_at'),
    decidedByUserId: ref('decided_by_user_id').references(() => users.id),
  },
  // At most one pending offer per organization (it arrives with the first administrator's invitation).
  (t) => [
    uniqueIndex('commercial_offers_pending_uq').on(t.organizationId).where(sql`${t.status} = 'pending'`),
  ],
);

/**
 * Every mutation made in this service, per organization (spec part 2's `/api/v2/buyer/audit-logs`): who (user and
 * credential kind), what (`action`, `targetType`, `targetId` public id) and when; `metadata` never holds a secret.
 */
export const auditLogs = mediaBuyingSchema.table(
  'audit_logs',
  {
    id: id(),
    organizationId: ref('organization_id').references(() => organizations.id),
    actorUserId: ref('actor_user_id').references(() => users.id),
    /** `session`, `user_api_key`, ..., or `operator`. */
    actorKind: text('actor_kind').notNull(),
    action: text('action').notNull(),
    targetType: text('target_type').notNull(),
    targetId: text('target_id'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull(),
    createdAt: at('created_at').notNull(),
  },
  (t) => [index('audit_logs_org_idx').on(t.organizationId, t.id)],
);

/** Invitation kinds: `setup` (an admitted organization's administrator, sent by the operator) or `member`. */
export const INVITATION_KINDS = ['setup', 'member'] as const;

/**
 * Invitations to join an organization (`inv_`); the link's token is a credential (its SHA-256 in `key_hash`),
 * single use (`acceptedAt`), expiring, revocable.
 */
export const invitations = mediaBuyingSchema.table(
  'invitations',
  {
    ...expiringCredentialColumns(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    /** Lower-cased. */
    email: text('email').notNull(),
    role: text('role', { enum: MEMBERSHIP_ROLES }).notNull(),
    kind: text('kind', { enum: INVITATION_KINDS }).notNull(),
    invitedByUserId: ref('invited_by_user_id').references(() => users.id),
    commercialOfferId: ref('commercial_offer_id').references(() => commercialOffers.id),
    acceptedAt: at('accepted_at'),
    acceptedByUserId: ref('accepted_by_user_id').references(() => users.id),
    /** The invitee's name as the inviter wrote it (prefills the acceptance form), if given. */
    inviteeName: text('invitee_name'),
  },
  (t) => [index('invitations_org_idx').on(t.organizationId), index('invitations_email_idx').on(t.email)],
);

/** Mail sent (or kept in the outbox when no SMTP server is configured). */
export const mailOutbox = mediaBuyingSchema.table(
  'mail_outbox',
  {
    id: id(),
    toAddress: text('to_address').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body'),
    /** What the mail is (`magic_code`, `password_reset`, `invitation`, `preview_receipt`, ...). */
    kind: text('kind').notNull(),
    createdAt: at('created_at').notNull(),
    /** `smtp` once handed to the SMTP server; `outbox` when none is configured (kept here only). */
    transport: text('transport', { enum: ['smtp', 'outbox'] }).notNull(),
    sentAt: at('sent_at'),
    messageId: text('message_id'),
    /** The last delivery error (no secret: the SMTP server's reply). */
    lastError: text('last_error'),
  },
  (t) => [index('mail_outbox_to_idx').on(t.toAddress, t.id)],
);

/** How a browser session was opened. */
export const SIGN_IN_METHODS = [
  'password',
  'magic_code',
  'sso',
  'oauth',
  'signup',
  'invitation',
  'reset',
] as const;

/** Browser sessions (cookie `mb_session`, `mbs_` secret): interactive, bound to a user, expiring. */
export const sessions = mediaBuyingSchema.table(
  'sessions',
  {
    ...expiringCredentialColumns(),
    userId: ref('user_id')
      .notNull()
      .references(() => users.id),
    method: text('method', { enum: SIGN_IN_METHODS }).notNull(),
  },
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/**
 * Permission names of user API keys (spec "Authentication"): `platform:access` on every new key (the owner's live
 * access); the earlier hierarchical names keep working on existing keys.
 */
export const KEY_PERMISSIONS = [
  'platform:access',
  'platform:read',
  'platform:write',
  'platform:admin',
  'buyer:read',
  'buyer:write',
  'buyer:admin',
] as const;
export type KeyPermission = (typeof KEY_PERMISSIONS)[number];

/** User API keys (`mbu_` secret, `uak_` id): act as their creating user in the organization active at creation. */
export const userApiKeys = mediaBuyingSchema.table(
  'user_api_keys',
  {
    ...credentialColumns(),
    publicId: text('public_id').notNull().unique(),
    userId: ref('user_id')
      .notNull()
      .references(() => users.id),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    permissions: text('permissions').array().$type<KeyPermission[]>().notNull(),
  },
  (t) => [index('user_api_keys_user_idx').on(t.userId, t.organizationId)],
);

/** Organization-owned keys (`key_` id, `mbo_` secret): from before user keys; listed and revoked by admins only. */
export const orgApiKeys = mediaBuyingSchema.table(
  'org_api_keys',
  {
    ...credentialColumns(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    permissions: text('permissions').array().$type<KeyPermission[]>().notNull(),
  },
  (t) => [index('org_api_keys_org_idx').on(t.organizationId)],
);

/** Legacy customer-scoped keys (`lgc_` secret): imported by the operator, accepted until expiry or revocation. */
export const legacyKeys = mediaBuyingSchema.table(
  'legacy_keys',
  {
    ...expiringCredentialColumns(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    permissions: text('permissions').array().$type<KeyPermission[]>().notNull(),
  },
  (t) => [index('legacy_keys_org_idx').on(t.organizationId)],
);

/** Widget tokens (`wgt_`): short-lived, bound to a user and the organization active when issued. */
export const widgetTokens = mediaBuyingSchema.table('widget_tokens', {
  ...expiringCredentialColumns(),
  userId: ref('user_id')
    .notNull()
    .references(() => users.id),
  organizationId: ref('organization_id')
    .notNull()
    .references(() => organizations.id),
});

/** M2M applications (`m2m_`): OAuth clients of an organization for the client-credentials grant. */
export const m2mApplications = mediaBuyingSchema.table(
  'm2m_applications',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    name: text('name').notNull(),
    /** The OAuth `client_id`. */
    clientId: text('client_id').notNull().unique(),
    /** What its tokens may do (`platform:read`, `platform:write`, `buyer:read`, `buyer:write`). */
    permissions: text('permissions').array().$type<KeyPermission[]>().notNull(),
    createdByUserId: ref('created_by_user_id')
      .notNull()
      .references(() => users.id),
    createdAt: at('created_at').notNull(),
    /** Deleted applications' tokens are refused at once. */
    deletedAt: at('deleted_at'),
  },
  (t) => [index('m2m_applications_org_idx').on(t.organizationId)],
);

/** Client secrets (`mbcs_`) of M2M applications; two may be active at once during a rotation. */
export const m2mClientSecrets = mediaBuyingSchema.table(
  'm2m_client_secrets',
  {
    ...expiringCredentialColumns(),
    applicationId: ref('application_id')
      .notNull()
      .references(() => m2mApplications.id),
  },
  (t) => [index('m2m_client_secrets_app_idx').on(t.applicationId)],
);

/**
 * The service's token-signing keys (JWTs of M2M applications): ES256, one active; a retired key's private half is
 * erased and its public half stays in the JWKS until every token it signed has expired (platform `signing-keys.ts`).
 */
export const signingKeys = mediaBuyingSchema.table('signing_keys', signingKeyColumns());

/**
 * Buyer-agent M2M credentials (`bag_` id, `mba_` secret): an opaque identity of a buyer agent, no permissions;
 * issued, replaced and revoked by an organization administrator signed in directly.
 */
export const buyerAgentCredentials = mediaBuyingSchema.table(
  'buyer_agent_credentials',
  {
    ...credentialColumns(),
    publicId: text('public_id').notNull().unique(),
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    /** The buyer agent's own identifier (its URL or name), unique among the organization's active credentials. */
    agentIdentifier: text('agent_identifier').notNull(),
    issuedByUserId: ref('issued_by_user_id')
      .notNull()
      .references(() => users.id),
    /** The credential that replaced this one (replacement revokes it). */
    replacedById: ref('replaced_by_id'),
  },
  (t) => [
    uniqueIndex('buyer_agent_credentials_active_uq')
      .on(t.organizationId, t.agentIdentifier)
      .where(sql`${t.revokedAt} is null`),
  ],
);

/** Activation states (spec "States and transitions", activation). */
export const ACTIVATION_STATES = ['unbound_free', 'bound_free', 'customer_bound'] as const;

/**
 * Agent registration credentials (`mbr_` secret; the older buyer read tokens `mbt_` are an accepted alias): an agent
 * with no credential registers, gets the read permission and a 30-day sandbox allowance (part 2's activation).
 */
export const agentRegistrations = mediaBuyingSchema.table('agent_registrations', {
  ...expiringCredentialColumns(),
  /** `activationId` of the activation record. */
  publicId: text('public_id').notNull().unique(),
  workloadId: text('workload_id').notNull(),
  state: text('state', { enum: ACTIVATION_STATES }).notNull(),
  /** The Buyer Account it is bound to (`customer_bound`), else null. */
  organizationId: ref('organization_id').references(() => organizations.id),
  claimedByUserId: ref('claimed_by_user_id').references(() => users.id),
  /** The one provider account connected inside the sandbox (`bound_free`). */
  providerAccount: jsonb('provider_account').$type<Record<string, unknown>>(),
  allowanceEndsAt: at('allowance_ends_at').notNull(),
});

/** OAuth flows whose state the server keeps across the round trip (spec rule 6). */
export const SIGN_IN_FLOWS = ['auth', 'sso'] as const;

/**
 * Server-side state of a sign-in round trip (`GET /auth/url`, `/auth/sso/url` -> `POST /auth/token`,
 * `/auth/sso/callback`): the opaque `state` (its SHA-256 here), the routing intent (`signup_experience`), PKCE
 * verifier and nonce (sealed), single use.
 */
export const signInStates = mediaBuyingSchema.table('sign_in_states', {
  id: id(),
  stateHash: text('state_hash').notNull().unique(),
  flow: text('flow', { enum: SIGN_IN_FLOWS }).notNull(),
  signupExperience: text('signup_experience'),
  /** AES-256-GCM sealed JSON `{codeVerifier, nonce}`. */
  secretsSealed: text('secrets_sealed').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  /**
   * SHA-256 of the browser binding: the secret of the `mb_signin` cookie of the browser that started the round trip.
   * The callback must come from that browser (code and state alone do not complete another browser's sign-in).
   */
  browserBindingHash: text('browser_binding_hash').notNull(),
  createdAt: at('created_at').notNull(),
  expiresAt: at('expires_at').notNull(),
  consumedAt: at('consumed_at'),
});

/**
 * Signup-recovery tokens (`verifiedSignupToken`, `mbv_`): ten minutes, bound to the verified identity's subject and
 * email, consumed atomically by account creation.
 */
export const signupRecoveryTokens = mediaBuyingSchema.table('signup_recovery_tokens', {
  ...expiringCredentialColumns(),
  identityId: ref('identity_id')
    .notNull()
    .references(() => identities.id),
  subject: text('subject').notNull(),
  email: text('email').notNull(),
  signupExperience: text('signup_experience'),
  consumedAt: at('consumed_at'),
});

/** Magic sign-in codes (also email verification): six digits (SHA-256 here), short-lived, single use, a few attempts. */
export const magicCodes = mediaBuyingSchema.table(
  'magic_codes',
  {
    id: id(),
    identityId: ref('identity_id')
      .notNull()
      .references(() => identities.id),
    codeHash: text('code_hash').notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    consumedAt: at('consumed_at'),
    /**
     * A signup's chosen password (argon2id PHC string), installed on the identity only when this code verifies the
     * email: a password nobody proved the address for never signs in.
     */
    pendingPasswordHash: text('pending_password_hash'),
  },
  (t) => [index('magic_codes_identity_idx').on(t.identityId, t.id)],
);

/** Password-reset links (`mbp_` token): single use, short-lived. */
export const passwordResets = mediaBuyingSchema.table('password_resets', {
  ...expiringCredentialColumns(),
  identityId: ref('identity_id')
    .notNull()
    .references(() => identities.id),
  consumedAt: at('consumed_at'),
});

/**
 * Fixed-window counters of sign-in attempts per account and per client address, shared by every instance.
 * `bucket` is `account:<email>` or `address:<ip>`.
 */
export const signInThrottle = mediaBuyingSchema.table(
  'sign_in_throttle',
  {
    bucket: text('bucket').primaryKey(),
    windowStart: at('window_start').notNull(),
    failures: integer('failures').notNull(),
  },
  (t) => [check('sign_in_throttle_failures_nonnegative', sql`${t.failures} >= 0`)],
);

/**
 * Authorization codes of the built-in identity provider's hosted sign-in (`/auth/authorize` -> `POST /auth/token`,
 * `mbac_` secret, its SHA-256 here): bound to the identity that signed in, the client, the redirect URI and the PKCE
 * S256 challenge of the authorization request; one minute, single use.
 */
export const authorizationCodes = mediaBuyingSchema.table(
  'authorization_codes',
  {
    id: id(),
    codeHash: text('code_hash').notNull().unique(),
    identityId: ref('identity_id')
      .notNull()
      .references(() => identities.id),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    /** BASE64URL(SHA-256(code_verifier)) (RFC 7636, S256). */
    codeChallenge: text('code_challenge').notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    consumedAt: at('consumed_at'),
  },
  (t) => [index('authorization_codes_expires_idx').on(t.expiresAt)],
);

/** How the account of a public signup was made (`POST /api/v2/signup/accounts`): its type and plan selection. */
export const accountSignups = mediaBuyingSchema.table('account_signups', {
  id: id(),
  userId: ref('user_id')
    .notNull()
    .unique()
    .references(() => users.id),
  /** The organization it created (null for a developer account). */
  organizationId: ref('organization_id').references(() => organizations.id),
  /** `MEDIA_COMPANY`, `ADVERTISER`, `ADVERTISER_PORTFOLIO` or `DEVELOPER` (chosen in the form, never inferred). */
  accountType: text('account_type').notNull(),
  /** The routing metadata the sign-in carried (it granted nothing). */
  signupExperience: text('signup_experience'),
  /** The plan selected (only while the plan rollout is open). */
  plan: text('plan'),
  /** The signup code given (only while the plan rollout is open). */
  signupCode: text('signup_code'),
  createdAt: at('created_at').notNull(),
});

/** How an OAuth client of an MCP connector came to be known (`mcp/oauth/clients.ts`). */
export const OAUTH_CLIENT_KINDS = ['dynamic', 'metadata_document'] as const;

/**
 * OAuth clients of MCP connectors: registered dynamically (RFC 7591, `client_id` `mcpc_...`) or known by their client
 * ID metadata document (the `client_id` is the https URL of the document, fetched and cached: `metadataFetchedAt`).
 * Public clients (`token_endpoint_auth_method` `none`, PKCE).
 */
export const oauthClients = mediaBuyingSchema.table('oauth_clients', {
  id: id(),
  clientId: text('client_id').notNull().unique(),
  name: text('name').notNull(),
  redirectUris: text('redirect_uris').array().notNull(),
  kind: text('kind', { enum: OAUTH_CLIENT_KINDS }).notNull().default('dynamic'),
  /** The client's home page (`client_uri`), shown on the consent page when given. */
  clientUri: text('client_uri'),
  /** When the metadata document was last fetched (metadata-document clients only). */
  metadataFetchedAt: at('metadata_fetched_at'),
  createdAt: at('created_at').notNull(),
});

/**
 * A user's approval of an MCP connector for one exact resource URI (Connected apps): `firstConnectedAt`,
 * `lastRefreshedAt`; disconnecting revokes it and every credential issued under it. At most one active grant per
 * user, client and resource (approving again updates it).
 */
export const mcpGrants = mediaBuyingSchema.table(
  'mcp_grants',
  {
    id: id(),
    publicId: text('public_id').notNull().unique(),
    userId: ref('user_id')
      .notNull()
      .references(() => users.id),
    oauthClientId: ref('oauth_client_id')
      .notNull()
      .references(() => oauthClients.id),
    /**
     * The organization the user chose on the consent page: the connector acts as the user in it, with the user's live
     * role there (a grant is worth nothing once the user is not an active member of it).
     */
    organizationId: ref('organization_id')
      .notNull()
      .references(() => organizations.id),
    /**
     * The exact MCP resource URI the grant is bound to (RFC 8707). Null for a connector authorized before resource
     * binding (spec "Authentication" rule 1): its credentials are refused and it must authorize again.
     */
    resource: text('resource'),
    /** The scope of the latest approval (Connected apps shows it); each credential carries its own. */
    scope: text('scope').notNull(),
    firstConnectedAt: at('first_connected_at').notNull(),
    lastRefreshedAt: at('last_refreshed_at'),
    revokedAt: at('revoked_at'),
  },
  (t) => [
    index('mcp_grants_user_idx').on(t.userId),
    uniqueIndex('mcp_grants_active_uq')
      .on(t.userId, t.oauthClientId, t.resource, t.organizationId)
      .where(sql`${t.revokedAt} is null`),
  ],
);

/**
 * One-time authorization codes of the MCP connector flow (RFC 6749 section 4.1, PKCE RFC 7636): SHA-256 at rest,
 * short-lived, single use (`usedAt`), bound to the grant (user, client, resource), the redirect URI and the S256
 * challenge. A code is also the family of the credentials issued from it (`familyId` of access and refresh
 * credentials): a code presented twice revokes them (RFC 6749 section 4.1.2).
 */
export const oauthAuthorizationCodes = mediaBuyingSchema.table(
  'oauth_authorization_codes',
  {
    id: id(),
    codeHash: text('code_hash').notNull().unique(),
    grantId: ref('grant_id')
      .notNull()
      .references(() => mcpGrants.id),
    redirectUri: text('redirect_uri').notNull(),
    /** PKCE `code_challenge` (S256, base64url of the verifier's SHA-256). */
    codeChallenge: text('code_challenge').notNull(),
    resource: text('resource').notNull(),
    scope: text('scope').notNull(),
    createdAt: at('created_at').notNull(),
    expiresAt: at('expires_at').notNull(),
    usedAt: at('used_at'),
  },
  (t) => [index('oauth_authorization_codes_grant_idx').on(t.grantId)],
);

/** MCP access credentials (`mcp_at_`), bound to a grant (user, client, resource). */
export const mcpAccessTokens = mediaBuyingSchema.table(
  'mcp_access_tokens',
  {
    ...expiringCredentialColumns(),
    grantId: ref('grant_id')
      .notNull()
      .references(() => mcpGrants.id),
    /** The authorization code whose exchange started this credential's family (null: issued before families). */
    familyId: ref('family_id').references(() => oauthAuthorizationCodes.id),
    /** Its OAuth scope (space-separated, canonical: `adcp:read`, `adcp:write`): what MCP calls it may make. */
    scope: text('scope').notNull(),
  },
  (t) => [index('mcp_access_tokens_grant_idx').on(t.grantId)],
);

/**
 * Rotating MCP refresh credentials (`mcp_rt_`): each use replaces it (`rotatedAt`); a rotated one presented again after
 * the grace period revokes the grant and all its credentials.
 */
export const mcpRefreshTokens = mediaBuyingSchema.table(
  'mcp_refresh_tokens',
  {
    ...expiringCredentialColumns(),
    grantId: ref('grant_id')
      .notNull()
      .references(() => mcpGrants.id),
    /** The authorization code whose exchange started this credential's family (null: issued before families). */
    familyId: ref('family_id').references(() => oauthAuthorizationCodes.id),
    rotatedAt: at('rotated_at'),
    /**
     * The refresh credential whose use issued this one (null: issued by a code exchange). Several credentials share a
     * parent when it was used again within the grace window; the first of them used supersedes the others.
     */
    parentId: ref('parent_id'),
    /**
     * When a sibling (same parent) was used first: this one is then a tripwire, its use a replay that revokes the
     * grant (the grace window can never fork a second live lineage).
     */
    supersededAt: at('superseded_at'),
    /** Its OAuth scope: what the credentials it issues may carry at most (a refresh never widens). */
    scope: text('scope').notNull(),
  },
  (t) => [
    index('mcp_refresh_tokens_grant_idx').on(t.grantId),
    index('mcp_refresh_tokens_parent_idx').on(t.parentId),
  ],
);

/** Part 3's buying-layer tables (simulator faults, storefront buying settings, dispatches). */
export * from './buying.ts';
/** Part 2's tables (catalog, buying records, discovery, activation sandbox). */
export * from './catalog.ts';
/** Part 4's tables (text lines, consent, outbox, inbound texts). */
export * from './communications.ts';
/** Part 3's MCP session table. */
export * from './mcp.ts';
