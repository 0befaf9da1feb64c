/**
 * The discovery documents of the MCP authorization (MCP authorization, "Authorization Server Discovery"):
 *
 * - {@link mcpAuthorizationServerMetadata}: the MCP connector part of the service's RFC 8414 authorization-server
 *   metadata (the route merges it with the M2M client-credentials part: one issuer, one token endpoint);
 * - {@link protectedResourceMetadata}: the RFC 9728 metadata of one MCP endpoint (each endpoint, and each storefront's
 *   endpoint, is its own protected resource: `resource` is its exact URI).
 */
import { type McpTarget, mcpResourceUri } from '../contract.ts';
import { ALL_MCP_SCOPES, SCOPES_OF_AUDIENCE } from './scopes.ts';

/** Endpoint URLs of the authorization server under `issuer` (the service's public URL). */
export function oauthEndpoints(issuer: string) {
  return {
    authorization: `${issuer}/oauth/authorize`,
    token: `${issuer}/oauth/token`,
    registration: `${issuer}/oauth/register`,
    revocation: `${issuer}/oauth/revoke`,
  };
}

/**
 * The MCP connector fields of the RFC 8414 metadata: the code flow with PKCE S256 only, refresh, dynamic registration
 * (RFC 7591) and client ID metadata documents, revocation (RFC 7009), public clients (`none`), the `iss` response
 * parameter (RFC 9207); the scopes of MCP connectors (`scopes.ts`).
 */
export function mcpAuthorizationServerMetadata(issuer: string) {
  const endpoints = oauthEndpoints(issuer);
  return {
    issuer,
    authorization_endpoint: endpoints.authorization,
    token_endpoint: endpoints.token,
    registration_endpoint: endpoints.registration,
    revocation_endpoint: endpoints.revocation,
    revocation_endpoint_auth_methods_supported: ['none'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...ALL_MCP_SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * RFC 9728 protected-resource metadata of an MCP endpoint: its exact resource URI, this service as its authorization
 * server, bearer credentials in the `Authorization` header only, the scopes the endpoint offers and its name.
 * @param name the resource's human name (`resource_name`): the endpoint's, or a storefront's.
 */
export function protectedResourceMetadata(publicUrl: string, target: McpTarget, name: string) {
  return {
    resource: mcpResourceUri(publicUrl, target.path),
    authorization_servers: [publicUrl],
    bearer_methods_supported: ['header'],
    scopes_supported: [...SCOPES_OF_AUDIENCE[target.endpoint.audience]],
    resource_name: name,
  };
}
