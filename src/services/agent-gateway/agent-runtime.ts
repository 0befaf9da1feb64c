/**
 * The agent runtime (README "Agents"): the definition of each agent kind, its checks, and its execution.
 *
 * Built-in deterministic kinds run offline, in process:
 * - `template`: renders a text template over the turn's context (`{{ message }}`, `{{ input.x }}`);
 * - `json_transform`: renders a JSON template, keeping value types (`{"total": "{{ input.amount }}"}`);
 * - `tool_use`: calls built-in tools in order (each call optionally only when the message contains a word), each
 *   call recorded as `tool.called` / `tool.result` events, then renders an answer over the results;
 * - `model`: the optional OpenAI-compatible adapter (model-adapter.ts), when configured;
 * - `remote`: executed by a runtime host of an environment (host-protocol.ts), never in process.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FieldIssue } from '../../platform/errors.ts';
import { jsonTemplateProblems, renderJson, renderText, templateProblems } from './templates.ts';
import { runTool, TOOL_NAMES, type ToolContext, ToolError, type ToolName } from './tools.ts';

/** The agent kinds. */
export const AGENT_KINDS = ['template', 'json_transform', 'tool_use', 'model', 'remote'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

/** The definition of each kind (checked in domain code; the request schema only names `kind`). */
const DEFINITIONS = {
  template: Type.Object(
    { kind: Type.Literal('template'), template: Text(20_000) },
    { additionalProperties: false },
  ),
  json_transform: Type.Object(
    { kind: Type.Literal('json_transform'), output: Type.Unknown() },
    { additionalProperties: false },
  ),
  tool_use: Type.Object(
    {
      kind: Type.Literal('tool_use'),
      tools: Type.Array(Type.Union(TOOL_NAMES.map((t) => Type.Literal(t))), {
        minItems: 1,
        maxItems: TOOL_NAMES.length,
        uniqueItems: true,
      }),
      calls: Type.Array(
        Type.Object(
          {
            tool: Type.Union(TOOL_NAMES.map((t) => Type.Literal(t))),
            args: Type.Optional(Type.Unknown()),
            when: Type.Optional(Type.Object({ contains: Text(200) }, { additionalProperties: false })),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 10 },
      ),
      answer: Text(20_000),
      table: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
  model: Type.Object(
    {
      kind: Type.Literal('model'),
      model: Text(200),
      systemPrompt: Type.Optional(Type.String({ maxLength: 20_000 })),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_000 })),
    },
    { additionalProperties: false },
  ),
  remote: Type.Object(
    {
      kind: Type.Literal('remote'),
      environmentId: Type.String({ pattern: '^env_[0-9a-f]{32}$' }),
      instructions: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
};

/** A checked agent definition. */
export type AgentDefinition = {
  [K in AgentKind]: Static<(typeof DEFINITIONS)[K]>;
}[AgentKind];

/** Whether agents of a kind take chat turns unless told otherwise (a JSON transform answers data, not talk). */
export function conversationalByDefault(kind: AgentKind): boolean {
  return kind !== 'json_transform';
}

/**
 * The problems of a definition (its kind's schema, then its templates and tools), as field issues under `at`
 * (`body.definition`). Empty when it is valid.
 */
export function definitionIssues(definition: unknown, at: { location: string; field: string }): FieldIssue[] {
  const issue = (field: string, message: string): FieldIssue => ({
    location: at.location,
    field: field ? `${at.field}/${field}` : at.field,
    message,
  });
  const kind = (definition as { kind?: unknown } | null)?.kind;
  if (!AGENT_KINDS.includes(kind as AgentKind))
    return [issue('kind', `must be one of ${AGENT_KINDS.join(', ')}`)];
  const schema = DEFINITIONS[kind as AgentKind];
  const issues: FieldIssue[] = [];
  for (const e of Value.Errors(schema, definition)) {
    issues.push(issue(e.path.replace(/^\//, ''), e.message));
    if (issues.length >= 10) return issues;
  }
  if (issues.length > 0) return issues;
  const d = definition as AgentDefinition;
  if (d.kind === 'template') for (const p of templateProblems(d.template)) issues.push(issue('template', p));
  if (d.kind === 'json_transform')
    for (const p of jsonTemplateProblems(d.output)) issues.push(issue('output', p));
  if (d.kind === 'tool_use') {
    for (const p of templateProblems(d.answer)) issues.push(issue('answer', p));
    d.calls.forEach((call, i) => {
      if (!d.tools.includes(call.tool))
        issues.push(issue(`calls/${i}/tool`, `'${call.tool}' is not in tools`));
      for (const p of jsonTemplateProblems(call.args ?? {})) issues.push(issue(`calls/${i}/args`, p));
    });
  }
  return issues;
}

/** What an agent works on: the input, the message (a chat turn's text, or the input's `message`). */
export interface AgentInput {
  input: unknown;
  message: string;
  /** Extra context for templates: `chat` (id, title, turn), `run` (id, node). */
  context?: Record<string, unknown>;
}

/** One event an execution produced (recorded as a run event by the caller). */
export interface AgentEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The outcome of an execution: the output value, its text form (a chat reply), and its events. */
export interface AgentResult {
  output: unknown;
  text: string;
  events: AgentEvent[];
}

/** An agent execution that failed: a code and a message safe to show (recorded on the step or turn). */
export class AgentError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

/**
 * What a step or turn records when running an agent threw anything but an {@link AgentError} (a defect met while
 * running its definition): `agent_error`, with a message that shows no internals (the error itself is logged).
 */
export const UNEXPECTED_AGENT_FAILURE = {
  code: 'agent_error',
  message: 'The agent failed with an unexpected error.',
} as const;

/** Something that runs `model` agents (the optional OpenAI-compatible adapter). */
export interface ModelAdapter {
  complete(
    definition: Extract<AgentDefinition, { kind: 'model' }>,
    messages: { role: 'system' | 'user' | 'assistant'; content: string }[],
  ): Promise<string>;
}

/** The message of an input: its own `message` when it is a string, else the input as text. */
export function messageOf(input: unknown): string {
  if (input && typeof input === 'object' && typeof (input as { message?: unknown }).message === 'string')
    return (input as { message: string }).message;
  return typeof input === 'string' ? input : JSON.stringify(input ?? null);
}

/** Runs agents of the in-process kinds. */
export class AgentRuntime {
  /**
   * @param tools what the built-in tools use.
   * @param model the optional model adapter.
   * @param deadlineMs the longest one execution of an agent that waits on I/O (`model`, `tool_use` with
   *   `fetch_url`) may take, in milliseconds, whatever its calls' own timeouts (`AGENT_GATEWAY_TURN_TIMEOUT_MS`).
   */
  constructor(
    private readonly tools: Omit<ToolContext, 'table'>,
    private readonly model: ModelAdapter | undefined,
    private readonly deadlineMs: number,
  ) {}

  /**
   * Executes a checked definition of an in-process kind, within the deadline when it waits on I/O.
   * @param history earlier turns of a chat, oldest first (used by `model` agents).
   * @throws AgentError `turn_timeout` past the deadline (the late answer is dropped), and those of
   *   {@link AgentRuntime.run}.
   */
  async execute(
    definition: AgentDefinition,
    input: AgentInput,
    history: { message: string; reply: string }[] = [],
  ): Promise<AgentResult> {
    const waitsOnIo =
      definition.kind === 'model' ||
      (definition.kind === 'tool_use' && definition.tools.includes('fetch_url'));
    if (!waitsOnIo) return this.run(definition, input, history);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new AgentError('turn_timeout', `The agent did not answer within ${this.deadlineMs} ms.`)),
        this.deadlineMs,
      );
    });
    const work = this.run(definition, input, history);
    work.catch(() => undefined); // a late failure after the deadline is nobody's answer
    try {
      return await Promise.race([work, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** True when the `model` kind can run here (an adapter is configured). */
  get modelConfigured(): boolean {
    return this.model !== undefined;
  }

  /**
   * Executes a checked definition of an in-process kind (no deadline of its own).
   * @throws AgentError `remote_agent` for a `remote` definition (hosts run those), `model_not_configured`,
   *   `model_failed`, `model_timeout`.
   */
  private async run(
    definition: AgentDefinition,
    input: AgentInput,
    history: { message: string; reply: string }[] = [],
  ): Promise<AgentResult> {
    const context = { ...(input.context ?? {}), input: input.input, message: input.message };
    switch (definition.kind) {
      case 'template': {
        const text = renderText(definition.template, context);
        return { output: { text }, text, events: [] };
      }
      case 'json_transform': {
        const output = renderJson(definition.output, context);
        return { output, text: JSON.stringify(output), events: [] };
      }
      case 'tool_use':
        return this.useTools(definition, input, context);
      case 'model': {
        if (!this.model)
          throw new AgentError(
            'model_not_configured',
            'No model adapter is configured (AGENT_GATEWAY_MODEL_BASE_URL).',
          );
        const messages = [
          ...(definition.systemPrompt ? [{ role: 'system' as const, content: definition.systemPrompt }] : []),
          ...history.flatMap((h) => [
            { role: 'user' as const, content: h.message },
            { role: 'assistant' as const, content: h.reply },
          ]),
          { role: 'user' as const, content: input.message },
        ];
        const text = await this.model.complete(definition, messages);
        return {
          output: { text },
          text,
          events: [{ type: 'model.completed', data: { model: definition.model } }],
        };
      }
      case 'remote':
        throw new AgentError('remote_agent', 'Remote agents are executed by runtime hosts.');
    }
  }

  private async useTools(
    definition: Extract<AgentDefinition, { kind: 'tool_use' }>,
    input: AgentInput,
    context: Record<string, unknown>,
  ): Promise<AgentResult> {
    const events: AgentEvent[] = [];
    const calls: {
      tool: ToolName;
      args: unknown;
      result?: unknown;
      error?: { code: string; message: string };
    }[] = [];
    const results: Record<string, unknown> = {};
    const lowered = input.message.toLowerCase();
    for (const call of definition.calls) {
      if (call.when && !lowered.includes(call.when.contains.toLowerCase())) continue;
      const args = renderJson(call.args ?? {}, { ...context, tools: calls, results });
      events.push({ type: 'tool.called', data: { tool: call.tool, args } });
      try {
        const result = await runTool(call.tool, args, { ...this.tools, table: definition.table ?? {} });
        calls.push({ tool: call.tool, args, result });
        results[call.tool] = result;
        events.push({ type: 'tool.result', data: { tool: call.tool, result } });
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        const error = { code: err.code, message: err.message };
        calls.push({ tool: call.tool, args, error });
        events.push({ type: 'tool.result', data: { tool: call.tool, error } });
      }
    }
    const text = renderText(definition.answer, { ...context, tools: calls, results });
    return { output: { text, tools: calls }, text, events };
  }
}
