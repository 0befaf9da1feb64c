/**
 * SSO through an OpenID Connect provider: the client (`oauth4webapi`) and the built-in provider simulator. Other
 * folders use this module through this file only.
 */
import type { Clock } from '../../../platform/clock.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/database.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import type { OutboundHttp } from '../../../platform/outbound-http.ts';
import type { Accounts, SignInStates } from '../identity/index.ts';
import type { MediaBuyingConfig } from '../media-buying-config.ts';
import { guardedTransport, SsoClient } from './oidc-client.ts';
import { OidcSimulator } from './oidc-simulator.ts';

export { SsoClient } from './oidc-client.ts';
export {
  type AuthorizationParams,
  LOGIN_PATTERN,
  OidcSimulator,
  SIMULATOR_EMAIL_DOMAIN,
  SIMULATOR_PATH,
  SIMULATOR_PEOPLE,
} from './oidc-simulator.ts';

/** The client id of this service at the built-in simulator. */
export const SIMULATOR_CLIENT_ID = 'media-buying';

/**
 * The SSO of the service: against the external issuer of `config.oidc` (through the SSRF-guarded client), or by
 * default against the built-in simulator (served by the service, reached in process).
 * @returns the client, and the simulator when it is the provider (its routes are served only then).
 */
export function createSso(deps: {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  logger: AppLogger;
  outbound: OutboundHttp;
  accounts: Accounts;
  states: SignInStates;
  config: MediaBuyingConfig;
  publicUrl: () => string;
  /** The UI origin (read per use). */
  uiOrigin: () => string;
}): { client: SsoClient; simulator: OidcSimulator | undefined } {
  const redirectUri = () => `${deps.uiOrigin()}/sign-in/sso/callback`;
  const external = deps.config.oidc;
  if (external) {
    const client = new SsoClient(deps.db, deps.clock, deps.states, deps.accounts, deps.logger, {
      issuer: () => external.issuer,
      clientId: external.clientId,
      clientSecret: () => external.clientSecret,
      redirectUri,
      transport: guardedTransport(deps.outbound),
      allowHttp: external.issuer.startsWith('http:'),
    });
    return { client, simulator: undefined };
  }
  const simulator = new OidcSimulator(deps.secrets, deps.clock, deps.publicUrl, deps.uiOrigin);
  const client = new SsoClient(deps.db, deps.clock, deps.states, deps.accounts, deps.logger, {
    issuer: () => simulator.issuer(),
    clientId: SIMULATOR_CLIENT_ID,
    clientSecret: () => simulator.clientSecret(SIMULATOR_CLIENT_ID),
    redirectUri,
    transport: (url, init) => simulator.fetch(url, init),
    allowHttp: true,
  });
  return { client, simulator };
}
