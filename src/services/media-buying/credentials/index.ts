/**
 * The credential control plane of the media-buying service: every kind of credential, who it stands for, and what
 * its caller may do now. Other folders use this module through this file only.
 */
import { type CredentialSource, firstAccepting } from '../../../platform/credentials.ts';
import type { ServiceContext } from '../../../platform/service.ts';
import { SigningKeys } from '../../../platform/signing-keys.ts';
import { signingKeys as signingKeyTable } from '../db/schema.ts';
import { Callers } from './caller.ts';
import { ConnectedApps } from './connected-apps.ts';
import { KeyService } from './keys.ts';
import { M2M_TOKEN_SECONDS, M2mApplications } from './m2m.ts';
import { type CredentialStores, createCredentialStores, type Holder, PREFIX } from './stores.ts';

export { type AccessLevel, allows, type PlatformFunction } from './access.ts';
export { type Caller, hasActiveAccess } from './caller.ts';
export { M2M_PERMISSIONS } from './m2m.ts';
export { type CredentialStores, type Holder, PREFIX } from './stores.ts';

/** The credentials of the service, made once per instance. */
export interface MediaBuyingCredentials {
  stores: CredentialStores;
  /** Every bearer credential of the REST API, by its form (prefix, or a JWT). */
  bearer: CredentialSource<Holder>;
  signingKeys: SigningKeys;
  m2m: M2mApplications;
  keys: KeyService;
  connectedApps: ConnectedApps;
  /** Resolves a credential's holder to its caller, live, on every request. */
  callers: Callers;
}

/** A JWT (three base64url segments), as M2M access tokens are. */
function looksLikeJwt(secret: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(secret);
}

/** Builds the credential stores, the signing keys, M2M applications, the key service and connected apps. */
export function createMediaBuyingCredentials(ctx: ServiceContext): MediaBuyingCredentials {
  const stores = createCredentialStores(ctx);
  const signingKeys = new SigningKeys(ctx.db, ctx.clock, ctx.secrets, {
    service: ctx.name,
    table: signingKeyTable,
    tokenTtlSeconds: M2M_TOKEN_SECONDS,
    // The verification leeway of JwtCredentialSource (30 s): a retired key stays published that much longer.
    leewaySeconds: 30,
  });
  const m2m = new M2mApplications(ctx.db, ctx.clock, stores, signingKeys, () => ctx.publicUrl);
  const byPrefix = (prefixes: readonly string[], source: CredentialSource<unknown>) => ({
    accepts: (secret: string) => prefixes.some((p) => secret.startsWith(p)),
    source: source as CredentialSource<Holder>,
  });
  const bearer = firstAccepting<Holder>([
    byPrefix([PREFIX.userApiKey], stores.userApiKeys),
    byPrefix([PREFIX.widgetToken], stores.widgetTokens),
    byPrefix([PREFIX.orgApiKey], stores.orgApiKeys),
    byPrefix([PREFIX.legacyKey], stores.legacyKeys),
    byPrefix([PREFIX.buyerAgent], stores.buyerAgents),
    byPrefix([PREFIX.agentRegistration, PREFIX.buyerReadToken], stores.agentRegistrations),
    byPrefix([PREFIX.mcpAccess], stores.mcpAccessTokens),
    { accepts: looksLikeJwt, source: m2m.tokens },
  ]);
  return {
    stores,
    bearer,
    signingKeys,
    m2m,
    keys: new KeyService(ctx.db, ctx.clock, stores),
    connectedApps: new ConnectedApps(ctx.db, ctx.clock, stores),
    callers: new Callers(ctx.db),
  };
}
