/**
 * The MCP tools of the media-buying service: one factory per module (the read tools, the admin tools, the buying
 * tools with their idempotency layer, and the account-link tools).
 */
import type { BuyerLists } from '../../catalog/index.ts';
import type { McpTool } from '../contract.ts';
import { type AccountToolDeps, createAccountTools } from './accounts.ts';
import { adminTools } from './admin.ts';
import { type BuyingToolDeps, createBuyingTools } from './buying.ts';
import { type ReadToolDeps, readTools } from './read.ts';

/** What the tools read and write through. */
export type McpToolDeps = ReadToolDeps & { lists: BuyerLists } & BuyingToolDeps & AccountToolDeps;

/** Every MCP tool of the service. */
export function createMcpTools(deps: McpToolDeps): McpTool[] {
  return [...readTools(deps), ...adminTools(deps), ...createBuyingTools(deps), ...createAccountTools(deps)];
}
