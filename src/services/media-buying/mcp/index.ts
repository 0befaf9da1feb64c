/**
 * The MCP side of the media-buying service (issue 18): the contract between the MCP layer and its tools
 * (`contract.ts`) and the OAuth authorization server of MCP connectors (`oauth/`). Other folders use this module
 * through this file only.
 */
export { MCP_ENDPOINTS, protectedResourceMetadataPath } from './contract.ts';
export {
  createMcpOAuth,
  liveResourceOfPath,
  type McpOAuth,
  mcpAuthorizationServerMetadata,
  protectedResourceMetadata,
  RegistrationError,
} from './oauth/index.ts';
