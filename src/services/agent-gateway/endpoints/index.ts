/** Endpoints: settings and schemas, the endpoint service (releases, rollback, disable), endpoint credentials. */
export {
  createEndpointCredentialStore,
  EndpointKeyService,
  type EndpointPrincipal,
  KEY_EXPIRY_SECONDS,
  OVERLAP_SECONDS,
} from './endpoint-keys.ts';
export {
  MAX_PAYLOAD_BYTES,
  SchemaCompileError,
  SLUG_PATTERN,
  TIMEOUT_SECONDS,
  validateAgainst,
} from './endpoint-settings.ts';
export { type EndpointRow, EndpointService, type ReleaseRow } from './endpoints.ts';
export { seedDemoEndpoint } from './seed-endpoint.ts';
