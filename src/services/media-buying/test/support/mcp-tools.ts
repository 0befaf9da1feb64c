/**
 * Test support of the MCP buying tools: calls a tool's handler the way the MCP layer will (arguments validated with
 * Ajv against its draft 2020-12 `inputSchema`; an `AdcpError` or `ApiError` rendered as the contract says:
 * `isError: true`, `structuredContent.adcp_error`, the same JSON as text, mirrored in `structuredContent.errors`),
 * with a real `McpToolContext` (a caller resolved from a real credential, a real database). The tools are built on
 * the booted service's database; {@link buildTools} can also build them on another pool (a second instance).
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Clock } from '../../../../platform/clock.ts';
import type { Db } from '../../../../platform/database.ts';
import { ApiError } from '../../../../platform/errors.ts';
import { IdempotencyStore } from '../../../../platform/idempotency.ts';
import type { ServiceContext } from '../../../../platform/service.ts';
import { CreativeDesk, MediaBuyDesk, SimulatedBuyingPlatform } from '../../buying/index.ts';
import { Catalog } from '../../catalog/index.ts';
import { createMediaBuyingCredentials } from '../../credentials/index.ts';
import {
  AdcpError,
  type AdcpErrorBody,
  MCP_ENDPOINTS,
  type McpTool,
  type McpToolContext,
  recoveryOfStatus,
} from '../../mcp/contract.ts';
import { McpIdempotency } from '../../mcp/idempotency.ts';
import { createAccountTools } from '../../mcp/tools/accounts.ts';
import { createBuyingTools } from '../../mcp/tools/buying.ts';
import { Organizations } from '../../organizations/index.ts';

/** A rendered tool result (MCP `CallToolResult`). */
export interface ToolResult {
  isError?: boolean;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
}

/** The tools of the buying layer, built on `db`. */
export function buildTools(db: Db, clock: Clock): Map<string, McpTool> {
  const organizations = new Organizations(db, clock);
  const catalog = new Catalog(db, clock, organizations, () => ['127.0.0.1', 'media-buying.test']);
  const adapter = new SimulatedBuyingPlatform();
  const idempotency = new McpIdempotency(new IdempotencyStore(db, clock));
  const tools = [
    ...createBuyingTools({
      catalog,
      desk: new MediaBuyDesk(db, clock, catalog, organizations, adapter),
      creatives: new CreativeDesk(clock, organizations, adapter),
      idempotency,
    }),
    ...createAccountTools({ db, catalog, idempotency }),
  ];
  return new Map(tools.map((t) => [t.name, t]));
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** Renders an error as the MCP layer does (contract module comment). */
function renderError(body: AdcpErrorBody): ToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: { adcp_error: body, errors: [body] },
  };
}

/**
 * Calls a tool as the MCP layer does: validates the arguments (an invalid call is `VALIDATION_ERROR`), runs the
 * handler, renders its result or error.
 */
export async function callTool(
  tools: Map<string, McpTool>,
  ctx: McpToolContext,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const tool = tools.get(name);
  assert.ok(tool, `no tool ${name}`);
  assert.ok(tool.audiences.includes(ctx.endpoint.audience), `${name} is not served on ${ctx.endpoint.path}`);
  const validate = ajv.compile(tool.inputSchema);
  if (!validate(args))
    return renderError({
      code: 'VALIDATION_ERROR',
      message: ajv.errorsText(validate.errors),
      recovery: 'correctable',
      field: validate.errors?.[0]?.instancePath ?? '',
    });
  try {
    const result = await tool.handler(ctx, args);
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
  } catch (e) {
    if (e instanceof AdcpError) return renderError(e.body);
    if (e instanceof ApiError)
      return renderError({
        code: e.code,
        message: e.message,
        recovery: recoveryOfStatus(e.status),
        ...(e.details ? { details: e.details } : {}),
      });
    throw e;
  }
}

/** The MCP contexts of a credential: the buyer endpoint and a storefront endpoint. */
export async function contextsOf(
  ctx: ServiceContext,
  credential: string,
): Promise<{
  buyer: McpToolContext;
  storefront(sf: { id: number; publicId: string; organizationId: number }): McpToolContext;
}> {
  const credentials = createMediaBuyingCredentials(ctx);
  const resolution = await credentials.bearer.resolve(credential);
  assert.equal(resolution.status, 'active');
  const caller = await credentials.callers.resolve(
    (resolution as { principal: Parameters<typeof credentials.callers.resolve>[0] }).principal,
  );
  assert.ok(typeof caller !== 'string', `caller refused: ${String(caller)}`);
  const [buyerEndpoint, storefrontEndpoint] = MCP_ENDPOINTS;
  return {
    buyer: { caller, endpoint: buyerEndpoint, storefront: null, adcpVersion: '3.1' },
    storefront: (sf) => ({
      caller,
      endpoint: { ...storefrontEndpoint, path: `/mcp/v3/storefronts/${sf.publicId}` },
      storefront: sf,
      adcpVersion: '3.1',
    }),
  };
}

/** The `adcp_error` of a failed result, after checking the rendering (text = structured, mirrored in errors). */
export function adcpError(result: ToolResult): AdcpErrorBody {
  assert.equal(result.isError, true, `expected an error, got ${result.content[0]?.text}`);
  const body = result.structuredContent.adcp_error as AdcpErrorBody;
  assert.deepEqual(JSON.parse(result.content[0]!.text), body);
  assert.deepEqual(result.structuredContent.errors, [body]);
  return body;
}

/** The structured content of a successful result. */
export function ok(result: ToolResult): Record<string, unknown> {
  assert.notEqual(result.isError, true, `expected success, got ${result.content[0]?.text}`);
  return result.structuredContent;
}
