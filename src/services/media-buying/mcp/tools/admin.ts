/**
 * The tools of the admin MCP endpoint (`/mcp/v3/admin`, session lifecycle only): Seller Account administration for
 * its administrators. `list_account_links` lists the account links (buyers' advertiser accounts) on the Seller
 * Account's storefronts, as the storefront REST API does, with AdCP pagination.
 */
import type { BuyerLists } from '../../catalog/index.ts';
import { allows } from '../../credentials/index.ts';
import { AdcpError, type McpTool } from '../contract.ts';

/** The largest page of `list_account_links`. */
const MAX_RESULTS = 100;

/** The admin tools (module comment). */
export function adminTools(deps: { lists: BuyerLists }): McpTool[] {
  const listAccountLinks: McpTool = {
    name: 'list_account_links',
    description:
      "The account links on your Seller Account's storefronts (status, advertiser, buyer), oldest first.",
    audiences: ['admin'],
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        adcp_version: { type: 'string', maxLength: 32 },
        adcp_major_version: { type: 'integer', minimum: 1, maximum: 99 },
        pagination: {
          type: 'object',
          properties: {
            max_results: { type: 'integer', minimum: 1, maximum: MAX_RESULTS },
            cursor: { type: 'string', pattern: '^links:\\d{1,6}$' },
          },
        },
      },
    },
    mutating: false,
    async handler(ctx, args) {
      const org = ctx.caller.organization;
      if (org?.kind !== 'seller' || !allows(ctx.caller.access, 'seller', 'admin'))
        throw new AdcpError({
          code: 'PERMISSION_DENIED',
          message: 'Only administrators of a Seller Account use the admin endpoint.',
          recovery: 'terminal',
          details: { reason: org?.kind === 'seller' ? 'admin_required' : 'wrong_account_kind' },
        });
      const p = (args.pagination ?? {}) as { max_results?: number; cursor?: string };
      const skip = p.cursor ? Number(p.cursor.slice('links:'.length)) : 0;
      const take = p.max_results ?? 50;
      const page = await deps.lists.accountLinks({ organizationId: org.id, take, skip });
      const hasMore = skip + page.items.length < page.total;
      return {
        account_links: page.items.map((l) => ({
          account_id: l.accountId,
          name: l.name,
          status: l.status,
          advertiser_id: l.advertiserId,
          storefront_id: l.storefrontId,
          currency: l.currency,
          created_at: l.createdAt,
          updated_at: l.updatedAt,
        })),
        pagination: {
          has_more: hasMore,
          total_count: page.total,
          ...(hasMore ? { cursor: `links:${skip + page.items.length}` } : {}),
        },
      };
    },
  };
  return [listAccountLinks];
}
