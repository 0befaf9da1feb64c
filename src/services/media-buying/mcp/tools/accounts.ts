/**
 * Account links over MCP (spec "Storefront account link", "Versioning"; AdCP 3.x `account/sync-accounts-*`,
 * `account/list-accounts-*`):
 *
 * - `sync_accounts` (storefront endpoints; mutating, under its `idempotency_key`): each provisioning entry (`brand` +
 *   `operator` + `billing`, `brand.brand_id` = the advertiser's id, `operator` = the Buyer Account's operator domain)
 *   requests the link of that advertiser on this storefront: `created` in `pending_approval`, or `unchanged` (whatever
 *   its status: resubmitting never speeds approval, `rejected`/`closed` need out-of-band re-onboarding). The seller
 *   decides on the storefront REST API. AdCP 3.2 identity fields a storefront cannot represent (`operator_unit`,
 *   `operator_identity`, `destination_billing_entity`) are `VERSION_UNSUPPORTED` (`details.reason`
 *   `adcp_3_2_account_identity_not_supported`, `field`, `details.unsupported_fields`), checked before anything else.
 * - `list_accounts` (buyer and storefront endpoints): the caller's links (on the storefront endpoint: on that
 *   storefront), oldest first, filtered by `status`, in AdCP pages (`pagination.max_results` 1-100, default 50; an
 *   opaque `cursor`; `has_more`, `total_count`).
 */

import { and, asc, count, eq, gt } from 'drizzle-orm';
import type { Db, Tx } from '../../../../platform/database.ts';
import { ApiError } from '../../../../platform/errors.ts';
import type { Acting, Catalog } from '../../catalog/index.ts';
import { allows } from '../../credentials/index.ts';
import { ACCOUNT_LINK_STATUSES, advertiserAccounts, advertisers, storefronts } from '../../db/schema.ts';
import { AdcpError, type McpTool } from '../contract.ts';
import type { McpIdempotency } from '../idempotency.ts';
import { ACCOUNT_REF, adcp, IDEMPOTENCY_KEY, requireBuyerWriter } from './buying.ts';

/** What the account tools need. */
export interface AccountToolDeps {
  db: Db;
  catalog: Catalog;
  idempotency: McpIdempotency;
}

/** AdCP 3.2 account-identity fields a storefront cannot represent. */
const IDENTITY_FIELDS_3_2 = ['operator_unit', 'operator_identity', 'destination_billing_entity'] as const;

interface SyncEntry {
  account?: unknown;
  brand?: { domain: string; brand_id?: string };
  operator?: string;
  billing?: string;
  [field: string]: unknown;
}

/** An opaque page cursor: the last account's internal id. */
function encodeCursor(id: number): string {
  return Buffer.from(`acc:${id}`).toString('base64url');
}

/** @throws AdcpError `INVALID_REQUEST` on `pagination.cursor` for a cursor this service did not issue. */
function decodeCursor(cursor: string): number {
  const match = /^acc:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match)
    throw new AdcpError({
      code: 'INVALID_REQUEST',
      message: 'pagination.cursor is not a cursor of this list.',
      recovery: 'correctable',
      field: 'pagination.cursor',
    });
  return Number(match[1]);
}

/** The account tools (module comment). */
export function createAccountTools(deps: AccountToolDeps): McpTool[] {
  const { db, catalog } = deps;

  /** One provisioning entry of `sync_accounts`: its result item (module comment). */
  const syncEntry = async (
    tx: Tx,
    acting: Acting,
    operator: string,
    storefrontId: string,
    entry: SyncEntry,
  ): Promise<Record<string, unknown>> => {
    const base = { brand: entry.brand ?? { domain: operator }, operator: entry.operator ?? operator };
    const fail = (code: string, message: string) => ({
      ...base,
      action: 'failed',
      // AdCP requires a status on every item; a refused entry names no account, so none was granted.
      status: 'rejected',
      errors: [{ code, message, recovery: 'correctable' }],
    });
    if (entry.account !== undefined || !entry.brand || !entry.operator)
      return fail(
        'UNSUPPORTED_PROVISIONING',
        'Only provisioning entries (brand + operator + billing) are supported.',
      );
    if (entry.operator !== operator)
      return fail(
        'ACCOUNT_IDENTITY_CONFLICT',
        `operator must be your Buyer Account's operator domain ${operator}.`,
      );
    try {
      const { row, action } = await catalog.requestAccountLink(tx, acting, {
        advertiserId: entry.brand.brand_id ?? '',
        storefrontId,
      });
      return {
        ...base,
        account_id: row.publicId,
        name: row.name,
        action,
        status: row.status,
        currency: row.currency,
        revision: row.revision,
        ...(entry.billing ? { billing: entry.billing } : {}),
      };
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) throw e;
      return fail(
        'REFERENCE_NOT_FOUND',
        `brand.brand_id ${entry.brand.brand_id ?? '(none)'} is not an advertiser of your Buyer Account.`,
      );
    }
  };

  const syncAccounts: McpTool = {
    name: 'sync_accounts',
    description:
      "Request account links of your advertisers on this storefront (AdCP sync_accounts): pending_approval until the seller decides; resubmitting answers unchanged. brand.brand_id is the advertiser's id.",
    audiences: ['storefront'],
    mutating: true,
    inputSchema: {
      type: 'object',
      required: ['idempotency_key', 'accounts'],
      properties: {
        adcp_version: { type: 'string', maxLength: 16 },
        adcp_major_version: { type: 'integer', minimum: 1, maximum: 99 },
        idempotency_key: IDEMPOTENCY_KEY,
        dry_run: { type: 'boolean' },
        delete_missing: { type: 'boolean' },
        accounts: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            properties: {
              account: ACCOUNT_REF,
              brand: {
                type: 'object',
                required: ['domain'],
                properties: {
                  domain: { type: 'string', maxLength: 253 },
                  brand_id: { type: 'string', maxLength: 64 },
                },
              },
              operator: { type: 'string', maxLength: 253 },
              billing: { type: 'string', maxLength: 32 },
            },
          },
        },
      },
    },
    async handler(ctx, raw) {
      const entries = raw.accounts as SyncEntry[];
      const unsupported = entries.flatMap((entry, i) =>
        IDENTITY_FIELDS_3_2.filter((f) => entry[f] !== undefined).map((f) => `accounts[${i}].${f}`),
      );
      if (unsupported.length > 0)
        throw new AdcpError({
          code: 'VERSION_UNSUPPORTED',
          message: `This storefront cannot represent AdCP 3.2 account identity (${unsupported.join(', ')}); send 3.1 provisioning entries.`,
          recovery: 'correctable',
          field: unsupported[0]!,
          details: {
            reason: 'adcp_3_2_account_identity_not_supported',
            unsupported_fields: unsupported,
            supported_versions: ['3.0', '3.1'],
          },
        });
      for (const flag of ['dry_run', 'delete_missing'])
        if (raw[flag] === true)
          throw new AdcpError({
            code: 'UNSUPPORTED_FEATURE',
            message: `${flag} is not supported by this storefront.`,
            recovery: 'correctable',
            field: flag,
          });
      const { acting, key } = await requireBuyerWriter(ctx, deps, false, 'sync_accounts', raw);
      const storefront = ctx.storefront!;
      return key.run((tx) =>
        adcp(async () => {
          const operator = await catalog.requireBuyerSetup(acting.organizationId, tx);
          const results: Record<string, unknown>[] = [];
          for (const entry of entries)
            results.push(await syncEntry(tx, acting, operator, storefront.publicId, entry));
          return { status: 'completed', accounts: results };
        }),
      );
    },
  };

  const listAccounts: McpTool = {
    name: 'list_accounts',
    description:
      'Your account links (AdCP list_accounts), oldest first, with AdCP pagination and a status filter.',
    audiences: ['buyer', 'storefront'],
    mutating: false,
    inputSchema: {
      type: 'object',
      properties: {
        adcp_version: { type: 'string', maxLength: 16 },
        adcp_major_version: { type: 'integer', minimum: 1, maximum: 99 },
        status: { enum: [...ACCOUNT_LINK_STATUSES] },
        pagination: {
          type: 'object',
          properties: {
            max_results: { type: 'integer', minimum: 1, maximum: 100 },
            cursor: { type: 'string', maxLength: 64 },
          },
        },
      },
    },
    async handler(ctx, raw) {
      const organization = ctx.caller.organization;
      if (organization?.kind !== 'buyer')
        return { status: 'completed', accounts: [], pagination: { has_more: false, total_count: 0 } };
      // The MCP layer checks the sandbox and the caller centrally; reading account links needs buyer read access.
      if (!allows(ctx.caller.access, 'buyer', 'read'))
        throw new AdcpError({
          code: 'PERMISSION_DENIED',
          message: 'This credential cannot read account links: it needs read access to the Buyer Account.',
          recovery: 'terminal',
        });
      const args = raw as { status?: string; pagination?: { max_results?: number; cursor?: string } };
      const take = args.pagination?.max_results ?? 50;
      const after = args.pagination?.cursor === undefined ? 0 : decodeCursor(args.pagination.cursor);
      const filters = [
        eq(advertiserAccounts.organizationId, organization.id),
        ...(ctx.storefront ? [eq(advertiserAccounts.storefrontId, ctx.storefront.id)] : []),
        ...(args.status
          ? [eq(advertiserAccounts.status, args.status as (typeof ACCOUNT_LINK_STATUSES)[number])]
          : []),
      ];
      const rows = await db
        .select({
          account: advertiserAccounts,
          advertiserId: advertisers.publicId,
          storefrontId: storefronts.publicId,
        })
        .from(advertiserAccounts)
        .innerJoin(advertisers, eq(advertisers.id, advertiserAccounts.advertiserId))
        .innerJoin(storefronts, eq(storefronts.id, advertiserAccounts.storefrontId))
        .where(and(...filters, gt(advertiserAccounts.id, after)))
        .orderBy(asc(advertiserAccounts.id))
        .limit(take + 1);
      const [total] = await db
        .select({ n: count() })
        .from(advertiserAccounts)
        .where(and(...filters));
      const page = rows.slice(0, take);
      const hasMore = rows.length > take;
      return {
        status: 'completed',
        accounts: page.map(({ account, advertiserId, storefrontId }) => ({
          account_id: account.publicId,
          name: account.name,
          status: account.status,
          advertiser: advertiserId,
          operator: account.operator,
          currency: account.currency,
          revision: account.revision,
          ext: { advertiser_id: advertiserId, storefront_id: storefrontId },
        })),
        pagination: {
          has_more: hasMore,
          ...(hasMore ? { cursor: encodeCursor(page[page.length - 1]!.account.id) } : {}),
          total_count: total!.n,
        },
      };
    },
  };

  return [syncAccounts, listAccounts];
}
