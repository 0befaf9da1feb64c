/**
 * The built-in tools of the `tool_use` agent (README "Agents"): deterministic, offline except `fetch_url`, which
 * goes through the platform's SSRF-guarded outbound client. Each takes JSON arguments and returns a JSON result or
 * throws {@link ToolError}.
 */
import type { Clock } from '../../platform/clock.ts';
import { OutboundError, type OutboundHttp } from '../../platform/outbound-http.ts';

/** A tool failure: its code and a message safe to record in run events. */
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** The names of the built-in tools. */
export const TOOL_NAMES = ['calculator', 'clock', 'word_count', 'lookup', 'fetch_url'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** What tools may use: the injected clock, outbound HTTP, the agent's own lookup table. */
export interface ToolContext {
  clock: Clock;
  outbound: OutboundHttp;
  fetchTimeoutMs: number;
  table: Record<string, unknown>;
}

const MAX_EXPRESSION = 200;

/**
 * Evaluates an arithmetic expression: numbers, `+ - * / %`, `^` (power, right-associative), parentheses and unary
 * minus, by recursive descent (no code evaluation). At most 200 characters.
 * @throws ToolError `invalid_expression` for anything else, division by zero, or a non-finite result.
 */
export function calculate(expression: string): number {
  if (expression.length > MAX_EXPRESSION)
    throw new ToolError('invalid_expression', `An expression has at most ${MAX_EXPRESSION} characters.`);
  const tokens = expression.match(/\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[-+*/%^()]|\S/g) ?? [];
  let i = 0;
  const fail = (message: string): never => {
    throw new ToolError('invalid_expression', message);
  };
  const peek = () => tokens[i];
  const primary = (): number => {
    const t = tokens[i++];
    if (t === undefined) return fail('The expression ends too early.');
    if (t === '(') {
      const v = sum();
      if (tokens[i++] !== ')') fail('A parenthesis is not closed.');
      return v;
    }
    if (t === '-') return -power();
    if (t === '+') return power();
    if (/^\d/.test(t)) return Number(t);
    return fail(`Unexpected '${t}'.`);
  };
  const power = (): number => {
    const base = primary();
    if (peek() === '^') {
      i++;
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let v = power();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = tokens[i++];
      const r = power();
      if ((op === '/' || op === '%') && r === 0) fail('Division by zero.');
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') {
      const op = tokens[i++];
      const r = product();
      v = op === '+' ? v + r : v - r;
    }
    return v;
  };
  if (tokens.length === 0) fail('The expression is empty.');
  const value = sum();
  if (i !== tokens.length) fail(`Unexpected '${tokens[i]}'.`);
  if (!Number.isFinite(value)) fail('The result is not a finite number.');
  return value;
}

function stringArg(args: unknown, name: string, max: number): string {
  const value = args && typeof args === 'object' ? (args as Record<string, unknown>)[name] : undefined;
  if (typeof value !== 'string')
    throw new ToolError('invalid_arguments', `Argument '${name}' must be a string.`);
  if (value.length > max)
    throw new ToolError('invalid_arguments', `Argument '${name}' has at most ${max} characters.`);
  return value;
}

/**
 * Runs one tool with its (rendered) arguments. `fetch_url` goes through the platform's SSRF-guarded client (public
 * addresses only unless `OUTBOUND_ALLOW_PRIVATE`, no redirects, `fetchTimeoutMs`, 16 KiB of body).
 * @throws ToolError for bad arguments, a failed calculation, a missing lookup key or a failed fetch
 *   (`fetch_blocked_address`, `fetch_timeout`, `fetch_dns`, `fetch_network`, `fetch_invalid_url`).
 */
export async function runTool(name: ToolName, args: unknown, ctx: ToolContext): Promise<unknown> {
  switch (name) {
    case 'calculator':
      return { value: calculate(stringArg(args, 'expression', MAX_EXPRESSION)) };
    case 'clock':
      return { now: ctx.clock.now().toISOString() };
    case 'word_count': {
      const text = stringArg(args, 'text', 100_000);
      return { words: text.split(/\s+/).filter(Boolean).length, characters: [...text].length };
    }
    case 'lookup': {
      const key = stringArg(args, 'key', 200);
      if (!Object.hasOwn(ctx.table, key)) throw new ToolError('not_found', `No entry '${key}' in the table.`);
      return { key, value: ctx.table[key] };
    }
    case 'fetch_url': {
      const url = stringArg(args, 'url', 2000);
      try {
        const res = await ctx.outbound.send(url, { timeoutMs: ctx.fetchTimeoutMs, maxBodyBytes: 16 * 1024 });
        return { status: res.status, body: res.body.toString('utf8'), truncated: res.truncated };
      } catch (err) {
        if (err instanceof OutboundError)
          throw new ToolError(
            `fetch_${err.kind}`,
            err.kind === 'blocked_address'
              ? `fetch_url reaches public addresses only: ${err.message}`
              : `fetch_url failed: ${err.message}`,
          );
        throw err;
      }
    }
  }
}
