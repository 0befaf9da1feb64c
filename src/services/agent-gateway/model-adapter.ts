/**
 * The optional OpenAI-compatible model adapter (README "Agents", kind `model`): chat completions through the
 * official `openai` client (6.x; 7.x needs Node 22), pointed at `AGENT_GATEWAY_MODEL_BASE_URL` (any
 * OpenAI-compatible server), with the configured timeout and one retry. The client's HTTP goes through the
 * platform's SSRF-guarded outbound client (a `fetch` built on `OutboundHttp.send`), so a model URL obeys the same
 * address rules as every other outbound call.
 */
import OpenAI, { APIConnectionTimeoutError, APIError } from 'openai';
import { OutboundError, type OutboundHttp, outboundFetch } from '../../platform/outbound-http.ts';
import { type AgentDefinition, AgentError, type ModelAdapter } from './agent-runtime.ts';

/** The largest model answer read (bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** Runs `model` agents against an OpenAI-compatible chat-completions API. */
export class OpenAiModelAdapter implements ModelAdapter {
  private readonly client: OpenAI;

  constructor(options: { baseUrl: string; apiKey: string; timeoutMs: number; outbound: OutboundHttp }) {
    this.client = new OpenAI({
      baseURL: options.baseUrl,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      maxRetries: 1,
      fetch: outboundFetch(options.outbound, options.timeoutMs, MAX_ANSWER_BYTES),
    });
  }

  /**
   * One chat completion.
   * @throws AgentError `model_timeout` (no answer within the timeout), `model_failed` (an error status, an
   *   unreachable or refused address, an answer without text).
   */
  async complete(
    definition: Extract<AgentDefinition, { kind: 'model' }>,
    messages: { role: 'system' | 'user' | 'assistant'; content: string }[],
  ): Promise<string> {
    try {
      const completion = await this.client.chat.completions.create({
        model: definition.model,
        messages,
        ...(definition.temperature !== undefined ? { temperature: definition.temperature } : {}),
        ...(definition.maxTokens !== undefined ? { max_tokens: definition.maxTokens } : {}),
      });
      const text = completion.choices[0]?.message?.content;
      if (typeof text !== 'string') throw new AgentError('model_failed', 'The model answered without text.');
      return text;
    } catch (err) {
      if (err instanceof AgentError) throw err;
      const cause = (err as { cause?: unknown }).cause;
      if (
        err instanceof APIConnectionTimeoutError ||
        (cause instanceof OutboundError && cause.kind === 'timeout')
      )
        throw new AgentError('model_timeout', 'The model did not answer in time.');
      if (err instanceof APIError && err.status !== undefined)
        throw new AgentError('model_failed', `The model answered HTTP ${err.status}.`);
      if (cause instanceof OutboundError)
        throw new AgentError('model_failed', `The model could not be reached: ${cause.message}`);
      throw new AgentError('model_failed', 'The model could not be reached.');
    }
  }
}
