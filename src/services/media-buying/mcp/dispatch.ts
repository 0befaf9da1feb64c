/**
 * Tool dispatch of the MCP endpoints (spec "MCP", "Errors", "Versioning"): `tools/list` per endpoint audience, and
 * `tools/call`: the AdCP version is negotiated ({@link negotiateAdcpVersion}; a cross-major call is
 * `VERSION_UNSUPPORTED` whatever its shape), the arguments are validated against the tool's `inputSchema` (JSON
 * Schema 2020-12, Ajv, every issue listed), a mutating tool (or one that `requiresTerms`) is refused while the caller
 * has Terms of Service to accept, then the handler runs. Results and failures are rendered as the contract says:
 *
 * - success: `structuredContent` = the AdCP response (with AdCP's protocol envelope `status: 'completed'` unless the
 *   tool set another, and `adcp_version`, the release served), and the same JSON as the text content;
 * - failure: `isError: true`, `structuredContent.adcp_error` = the AdCP error body, `structuredContent.errors` =
 *   `[body]` (and `status: 'failed'`), and the body's JSON as the text content. An {@link AdcpError} is rendered as is, an `ApiError` of the
 *   REST domain with its code, message and details and a `recovery` from its status ({@link recoveryOfStatus});
 *   anything else is `INTERNAL_ERROR` (`transient`) without the internal message (logged).
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ApiError } from '../../../platform/errors.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import { MediaBuyingCode } from '../media-buying-errors.ts';
import {
  AdcpError,
  type AdcpErrorBody,
  type AdcpIssue,
  type McpAudience,
  type McpTool,
  type McpToolContext,
  recoveryOfStatus,
} from './contract.ts';
import { negotiateAdcpVersion } from './versions.ts';

/** A `tools/call` result (MCP `CallToolResult`). */
export interface ToolCallResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** A tool as `tools/list` shows it (MCP `Tool`). */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; idempotentHint: boolean };
}

/** Ajv's RFC 6901 pointer (`/packages/0/x`) as AdCP's JSONPath-lite `field` (`packages[0].x`). */
export function pointerToField(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

/** The AdCP issues of Ajv's errors: `required` and `dependentRequired` point at the missing property itself. */
function issuesOf(errors: ErrorObject[]): AdcpIssue[] {
  return errors.map((e) => {
    const missing =
      e.keyword === 'required' || e.keyword === 'dependentRequired'
        ? (e.params as { missingProperty?: string }).missingProperty
        : undefined;
    const extra =
      e.keyword === 'additionalProperties'
        ? (e.params as { additionalProperty?: string }).additionalProperty
        : undefined;
    const child = missing ?? extra;
    const pointer =
      child === undefined
        ? e.instancePath
        : `${e.instancePath}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    return { pointer, keyword: e.keyword, message: e.message ?? 'is invalid' };
  });
}

/** The failure body of any thrown value (module comment). */
export function errorBodyOf(error: unknown, logger?: AppLogger): AdcpErrorBody {
  if (error instanceof AdcpError) return error.body;
  if (error instanceof ApiError) {
    const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
    return {
      code: error.code,
      message: error.message,
      recovery: recoveryOfStatus(error.status),
      ...(field ? { field } : {}),
      ...(error.details ? { details: error.details } : {}),
    };
  }
  logger?.error({ err: error }, 'MCP tool failed');
  return {
    code: MediaBuyingCode.internal,
    message: 'The tool failed unexpectedly; retry once, then contact support.',
    recovery: 'transient',
  };
}

/** The rendering of a failed call (module comment). */
export function renderError(body: AdcpErrorBody): ToolCallResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: { status: 'failed', adcp_error: body, errors: [body] },
  };
}

/** The rendering of a successful call (module comment). */
export function renderResult(result: Record<string, unknown>, adcpVersion: string): ToolCallResult {
  const structured = { status: 'completed', ...result, adcp_version: adcpVersion };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool with its compiled argument validator. */
interface CompiledTool {
  tool: McpTool;
  validate: ValidateFunction;
  listed: ListedTool;
}

/** The tools of the service and their dispatch (module comment). Built once per instance. */
export class McpDispatcher {
  private readonly tools = new Map<string, CompiledTool>();
  private readonly listed = new Map<McpAudience, ListedTool[]>();

  constructor(
    tools: readonly McpTool[],
    private readonly logger?: AppLogger,
  ) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats.default(ajv);
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`MCP tool ${tool.name} is defined twice`);
      if (tool.inputSchema.type !== 'object')
        throw new Error(`MCP tool ${tool.name}: inputSchema must be an object schema`);
      const listed: ListedTool = {
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: { readOnlyHint: !tool.mutating, idempotentHint: true },
      };
      this.tools.set(tool.name, { tool, validate: ajv.compile(tool.inputSchema), listed });
      for (const audience of tool.audiences)
        this.listed.set(audience, [...(this.listed.get(audience) ?? []), listed]);
    }
  }

  /** The tools an endpoint of `audience` lists (`tools/list`). */
  list(audience: McpAudience): ListedTool[] {
    return this.listed.get(audience) ?? [];
  }

  /** True when an endpoint of `audience` serves tool `name`. */
  serves(audience: McpAudience, name: string): boolean {
    return this.tools.get(name)?.tool.audiences.includes(audience) ?? false;
  }

  /** True when tool `name` exists and changes state (it needs the `adcp:write` scope of an OAuth credential). */
  mutates(name: string): boolean {
    return this.tools.get(name)?.tool.mutating ?? false;
  }

  /**
   * Calls tool `name` (which {@link serves} the context's audience) with `args` (module comment).
   * @returns the rendered result; never throws.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    ctx: Omit<McpToolContext, 'adcpVersion'>,
  ): Promise<ToolCallResult> {
    const compiled = this.tools.get(name)!;
    try {
      // The version first (AdCP `core/version-envelope.json`): a cross-major payload is VERSION_UNSUPPORTED even when
      // it does not match this major's input schema.
      const adcpVersion = negotiateAdcpVersion(args);
      if (!compiled.validate(args)) {
        const issues = issuesOf(compiled.validate.errors ?? []);
        throw new AdcpError({
          code: MediaBuyingCode.validation,
          message: `The arguments of ${name} do not match its input schema: ${issues
            .map((i) => `${i.pointer || '/'} ${i.message}`)
            .join('; ')}.`,
          recovery: 'correctable',
          field: pointerToField(issues[0]!.pointer),
          issues,
        });
      }
      if ((compiled.tool.mutating || compiled.tool.requiresTerms) && ctx.caller.outstandingTerms !== null)
        throw new AdcpError({
          code: MediaBuyingCode.tosAcceptanceRequired,
          message: `Accept the latest Terms of Service (version ${ctx.caller.outstandingTerms}) before making changes.`,
          recovery: 'terminal',
          details: { termsVersion: ctx.caller.outstandingTerms },
        });
      const result = await compiled.tool.handler({ ...ctx, adcpVersion }, args);
      return renderResult(result, adcpVersion);
    } catch (error) {
      return renderError(errorBodyOf(error, this.logger));
    }
  }
}
