/**
 * The first start's demo endpoint (issue 21 "Seed"): a job endpoint `demo-summary` with `api_key` authentication
 * over a deterministic JSON-transform agent, published as release 1, with one API key. Its values go to
 * `credentials.json` (`endpointSlug`, `endpointApiKey`, `endpointSampleInput`) for the README's example client.
 */
import type { Tx } from '../../../platform/database.ts';
import type { AgentService } from '../agents.ts';
import type { Scope } from '../identity.ts';
import type { EndpointKeyService } from './endpoint-keys.ts';
import type { EndpointService } from './endpoints.ts';

/** The demo endpoint's slug. */
export const DEMO_ENDPOINT_SLUG = 'demo-summary';

/** An input the demo endpoint's schema accepts. */
export const DEMO_SAMPLE_INPUT = { text: '  Quarterly numbers are up  ', language: 'en' };

/** Creates, publishes and keys the demo endpoint inside `tx`; returns its credentials.json fields. */
export async function seedDemoEndpoint(
  tx: Tx,
  deps: { agents: AgentService; endpoints: EndpointService; keys: EndpointKeyService },
  scope: Scope,
) {
  const agent = await deps.agents.create(
    scope,
    null,
    {
      name: 'Summarizer',
      description: 'Trims a text and counts its characters (a deterministic JSON transform).',
      conversational: false,
      definition: {
        kind: 'json_transform',
        output: {
          title: '{{ input.title }}',
          summary: '{{ input.input.text | trim }}',
          characters: '{{ input.input.text | trim | length }}',
        },
      },
    },
    tx,
  );
  const endpoint = await deps.endpoints.create(
    scope,
    null,
    {
      slug: DEMO_ENDPOINT_SLUG,
      invocationMode: 'job',
      targetType: 'agent',
      targetId: agent.id,
      authPolicy: { type: 'api_key' },
      timeoutSeconds: 60,
      maxPayloadBytes: 16_384,
      inputSchema: {
        type: 'object',
        required: ['text'],
        properties: { text: { type: 'string', minLength: 1 }, language: { type: 'string' } },
        additionalProperties: false,
      },
      outputSchema: {
        type: 'object',
        required: ['summary', 'characters'],
        properties: {
          title: { type: 'string' },
          summary: { type: 'string' },
          characters: { type: 'integer' },
        },
      },
    },
    tx,
  );
  await deps.endpoints.publish(scope, endpoint.id, null, endpoint.version, tx);
  const issued = await deps.keys.issueKey(scope, endpoint.id, null, { label: 'demo' }, tx);
  return {
    endpointSlug: DEMO_ENDPOINT_SLUG,
    endpointApiKey: issued.key,
    endpointApiKeyHeader: 'X-API-Key',
    endpointSampleInput: DEMO_SAMPLE_INPUT,
  };
}
