/**
 * What the authorization server reads live: which MCP resources exist now (a storefront endpoint only for an active
 * storefront). Whether a user still has active access to an organization is the credential kit's `hasActiveAccess`
 * (one rule with the MCP layer's caller resolution).
 */
import { eq } from 'drizzle-orm';
import type { Executor } from '../../../../platform/database.ts';
import { storefronts } from '../../db/schema.ts';
import { type McpTarget, mcpTargetOfPath, mcpTargetOfResource } from '../contract.ts';

/** An MCP resource that exists now, with its human name. */
export interface LiveResource {
  target: McpTarget;
  /** `resource_name`: the endpoint's name, with the storefront's name for a storefront endpoint. */
  name: string;
}

/** The live resource of a concrete target (its storefront active), or undefined. */
async function live(executor: Executor, target: McpTarget | undefined): Promise<LiveResource | undefined> {
  if (!target) return undefined;
  if (target.storefrontId === null) return { target, name: target.endpoint.name };
  const [storefront] = await executor
    .select({ name: storefronts.name, status: storefronts.status })
    .from(storefronts)
    .where(eq(storefronts.publicId, target.storefrontId));
  if (storefront?.status !== 'active') return undefined;
  return { target, name: `${target.endpoint.name}: ${storefront.name}` };
}

/** The MCP resource whose URI is exactly `resource` (RFC 8707), when it exists now. */
export function liveResourceOfUri(
  executor: Executor,
  publicUrl: string,
  resource: string,
): Promise<LiveResource | undefined> {
  return live(executor, mcpTargetOfResource(publicUrl, resource));
}

/** The MCP resource at URL path `path` (protected-resource metadata), when it exists now. */
export function liveResourceOfPath(executor: Executor, path: string): Promise<LiveResource | undefined> {
  return live(executor, mcpTargetOfPath(path));
}
