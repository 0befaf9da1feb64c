/**
 * The MCP tools of the media-buying service: one factory per module (the read tools and the admin tools here; the
 * buying and account tools of their own modules are added to {@link createMcpTools} when they land).
 */
import type { BuyerLists } from '../../catalog/index.ts';
import type { McpTool } from '../contract.ts';
import { adminTools } from './admin.ts';
import { type ReadToolDeps, readTools } from './read.ts';

/** What the tools read and write through. */
export type McpToolDeps = ReadToolDeps & { lists: BuyerLists };

/** Every MCP tool of the service. */
export function createMcpTools(deps: McpToolDeps): McpTool[] {
  return [...readTools(deps), ...adminTools(deps)];
}
