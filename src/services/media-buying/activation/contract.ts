/**
 * The published contract of the activation sandbox, generated from the policy table the guard enforces
 * ({@link SANDBOX_RULES}, {@link CLASS_DECISIONS}, {@link FALLBACK_CLASSES}): `GET /.well-known/buyer-activation.json`
 * (machine-readable) and `GET /auth.md` (the same contract for people and agents).
 */
import { sandboxDenialCode } from '../media-buying-errors.ts';
import {
  CLASS_DECISIONS,
  FALLBACK_CLASSES,
  type RouteClass,
  SANDBOX_RULES,
  SANDBOX_STATES,
} from './policy.ts';
import {
  ABANDONED_AFTER_DAYS,
  ACTIVATION_SCHEMA_VERSION,
  ALLOWANCE_DAYS,
  ASSERTION_SECONDS,
  ASSERTION_TYPE,
  SANDBOX_SPEND_CAP,
} from './sandbox.ts';

const CLASS_TEXT: Record<RouteClass, string> = {
  read: 'listed read routes',
  provider_binding: 'the provider binding (the one allowed mutation; no spend)',
  spend: 'spend-changing and money-moving routes, and MCP calls',
  nested_advertiser: 'routes nested under one advertiser',
  other_tenant:
    "other tenants' routes (seller storefronts, account and credential administration, unlisted reads)",
  mutation: 'every other mutation',
};

function methods(method: string): string {
  return method === 'GET' ? 'GET, HEAD' : method;
}

/** `/.well-known/buyer-activation.json` for the service at `baseUrl`. */
export function activationContract(baseUrl: string) {
  const denial = (c: RouteClass) => {
    const d = CLASS_DECISIONS[c];
    return d === 'allow' ? null : sandboxDenialCode(d);
  };
  const grants = SANDBOX_RULES.filter((r) => CLASS_DECISIONS[r.class] === 'allow').map((r) => ({
    methods: methods(r.method).split(', '),
    path: r.path,
    routeClass: r.class,
    description: r.description,
  }));
  const prohibitions = [
    ...SANDBOX_RULES.filter((r) => CLASS_DECISIONS[r.class] !== 'allow').map((r) => ({
      methods: r.method === '*' ? ['*'] : methods(r.method).split(', '),
      path: r.path,
      routeClass: r.class,
      code: denial(r.class)!,
      description: r.description,
    })),
    {
      methods: ['POST', 'PUT', 'PATCH', 'DELETE'],
      path: '*',
      routeClass: FALLBACK_CLASSES.unsafe,
      code: denial(FALLBACK_CLASSES.unsafe)!,
      description: 'Any other mutation',
    },
    {
      methods: ['GET', 'HEAD'],
      path: '*',
      routeClass: FALLBACK_CLASSES.safe,
      code: denial(FALLBACK_CLASSES.safe)!,
      description: 'Any read not granted above',
    },
  ];
  return {
    schemaVersion: ACTIVATION_SCHEMA_VERSION,
    identityProvider: {
      registrationEndpoint: `${baseUrl}/api/v2/activation/registrations`,
      tokenEndpoint: `${baseUrl}/api/v2/activation/token`,
      jwksUri: `${baseUrl}/.well-known/jwks.json`,
      assertion: {
        type: ASSERTION_TYPE,
        algorithm: 'ES256',
        lifetimeSeconds: ASSERTION_SECONDS,
        singleUse: true,
      },
    },
    probe: { methods: ['GET', 'HEAD'], url: `${baseUrl}/api/v2/buyer/activation` },
    bindingEndpoint: { method: 'POST', url: `${baseUrl}/api/v2/buyer/activation/provider-binding` },
    claimEndpoint: { method: 'POST', url: `${baseUrl}/api/v2/buyer/activation/claim` },
    trial: {
      ttlDays: ALLOWANCE_DAYS,
      spendCap: { ...SANDBOX_SPEND_CAP },
      onExpiry: 'credential_expired',
      abandonedUnboundAfterDays: ABANDONED_AFTER_DAYS,
    },
    states: [...SANDBOX_STATES],
    credentialScope: {
      prefix: 'mbr_',
      permission: 'read',
      authorization: 'Bearer',
      note: 'Access is derived from the verified registration credential and its activation state, never from extra permissions.',
    },
    grants,
    prohibitions,
  };
}

/** `/auth.md`: the same contract, as Markdown for people and agents. */
export function activationGuide(baseUrl: string): string {
  const c = activationContract(baseUrl);
  const lines = [
    '# Buyer activation: the zero-spend sandbox',
    '',
    `An agent with no credential gets a ${c.trial.ttlDays}-day sandbox with a zero-dollar spend cap.`,
    'Access comes from the verified registration credential and its state, never from extra permissions.',
    '',
    '## Steps',
    '',
    `1. Register anonymously: \`POST ${c.identityProvider.registrationEndpoint}\` with \`{"agentName": "..."}\`. The answer holds a signed assertion (${c.identityProvider.assertion.type}, ${c.identityProvider.assertion.algorithm}, ${c.identityProvider.assertion.lifetimeSeconds} seconds, single use).`,
    `2. Exchange it: \`POST ${c.identityProvider.tokenEndpoint}\` with \`{"assertion": "..."}\`. You get \`accessToken\` (\`${c.credentialScope.prefix}...\`, state \`unbound_free\`) and a \`claimCode\` for a person (both shown once).`,
    `3. Probe: \`GET ${c.probe.url}\` (or HEAD) with \`Authorization: Bearer <accessToken>\`: the activation record, the same on every retry, never a secret.`,
    `4. Bind a provider account connected inside the sandbox: \`POST ${c.bindingEndpoint.url}\` -> \`bound_free\`. The first connected account is kept, the others dropped; no spend.`,
    `5. Optionally, a person who is an active member of a Buyer Account claims the agent: \`POST ${c.claimEndpoint.url}\` with \`{"activationId", "claimCode"}\` -> \`customer_bound\`. No account is created or admitted.`,
    '',
    '## Lifetime',
    '',
    `- The credential expires ${c.trial.ttlDays} days after the exchange, in every state; then every request answers 401 \`UNAUTHORIZED\`.`,
    `- A sandbox still \`unbound_free\` ${c.trial.abandonedUnboundAfterDays} days after the exchange is removed (its credential revoked). Binding or a claim cancels this.`,
    '',
    '## Grants (every state)',
    '',
    ...c.grants.map((g) => `- \`${g.methods.join(', ')} ${g.path}\`: ${g.description}`),
    '',
    '## Prohibitions (every state)',
    '',
    ...c.prohibitions.map(
      (p) => `- \`${p.methods.join(', ')} ${p.path}\`: ${p.description} -> 403 \`${p.code}\``,
    ),
    '',
    '## Route classes',
    '',
    ...Object.entries(CLASS_DECISIONS).map(
      ([cls, d]) =>
        `- ${cls}: ${CLASS_TEXT[cls as RouteClass]} -> ${d === 'allow' ? 'allowed' : `\`${sandboxDenialCode(d)}\``}`,
    ),
    '',
  ];
  return lines.join('\n');
}
