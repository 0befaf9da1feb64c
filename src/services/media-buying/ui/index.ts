/**
 * The pages of the service: server-rendered HTML documents, their security headers and their static assets (no
 * Fastify here: `routes/pages.ts` serves them). Other folders use this module through this file only.
 */
export { ASSETS } from './assets.ts';
export { renderAuthorizationErrorPage, renderConsentPage } from './consent.ts';
export { PAGE_HEADERS, roundTripPageHeaders, type SignedInView } from './document.ts';
export {
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
} from './pages.ts';
export { renderHostedSignInPage, renderSimulatorPage } from './round-trip.ts';
