/**
 * TypeBox schemas of the OAuth parts of the payments API: the token endpoint's form and answers (RFC 6749 sections
 * 4.4.2, 5.1 and 5.2), the RFC 8414 metadata, the JWKS (RFC 7517), the merchant's OAuth client resources (JSON:API)
 * and the operator's signing-key records.
 */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/schemas.ts';
import { SCOPE_NAMES } from './oauth-scopes.ts';

const Timestamp = Type.String({ format: 'date-time' });
const ScopeName = StringEnum(SCOPE_NAMES);

/** The token request, `application/x-www-form-urlencoded` (RFC 6749 sections 4.4.2 and 2.3.1). */
export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.String({
      maxLength: 200,
      description: 'client_credentials',
      examples: ['client_credentials'],
    }),
    scope: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: 'Space-separated scopes; default all scopes of the client',
        examples: ['payment_intents:read payment_intents:write'],
      }),
    ),
    client_id: Type.Optional(Type.String({ maxLength: 200, description: 'client_secret_post only' })),
    client_secret: Type.Optional(Type.String({ maxLength: 200, description: 'client_secret_post only' })),
  },
  { additionalProperties: Type.String({ maxLength: 2000 }) },
);

/** The access token answer (RFC 6749 section 5.1). */
export const TokenResponse = Type.Object({
  access_token: Type.String({ description: 'A JWT access token (RFC 9068), signed ES256' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds' }),
  scope: Type.String({ description: 'The scopes granted, space-separated' }),
});

/** An error of the token endpoint (RFC 6749 section 5.2). */
export const OAuthErrorBody = Type.Object({
  error: StringEnum([
    'invalid_request',
    'invalid_client',
    'unsupported_grant_type',
    'invalid_scope',
    'server_error',
    'temporarily_unavailable',
  ] as const),
  error_description: Type.Optional(Type.String()),
});

/** Authorization server metadata (RFC 8414 section 2). */
export const AuthorizationServerMetadata = Type.Object({
  issuer: Type.String(),
  token_endpoint: Type.String(),
  jwks_uri: Type.String(),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  service_documentation: Type.String(),
});

/** Protected resource metadata (RFC 9728 section 2). */
export const ProtectedResourceMetadata = Type.Object({
  resource: Type.String(),
  authorization_servers: Type.Array(Type.String()),
  scopes_supported: Type.Array(Type.String()),
  bearer_methods_supported: Type.Array(Type.String()),
  resource_documentation: Type.String(),
});

/** A JWK set (RFC 7517 section 5): the public signing keys. */
export const JwkSet = Type.Object({
  keys: Type.Array(
    Type.Object(
      {
        kty: Type.String(),
        kid: Type.String(),
        alg: Type.String(),
        use: Type.String(),
        crv: Type.Optional(Type.String()),
        x: Type.Optional(Type.String()),
        y: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
  ),
});

/** Registration of an OAuth client by its merchant (JSON:API). */
export const CreateOAuthClientBody = Type.Object(
  {
    data: Type.Object(
      {
        type: Type.Literal('oauthClient'),
        attributes: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            scopes: Type.Optional(
              Type.Array(ScopeName, {
                minItems: 1,
                maxItems: SCOPE_NAMES.length,
                uniqueItems: true,
                description: 'What the client’s tokens may be granted; default every scope',
              }),
            ),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        data: {
          type: 'oauthClient',
          attributes: { name: 'Billing agent', scopes: ['payment_intents:read', 'payment_intents:write'] },
        },
      },
    ],
  },
);

const OAuthClientAttributes = {
  clientId: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  scopes: Type.Array(ScopeName),
  grantTypes: Type.Array(Type.Literal('client_credentials')),
  tokenEndpointAuthMethods: Type.Array(StringEnum(['client_secret_basic', 'client_secret_post'] as const)),
  secretHint: Type.String({ description: 'The last four characters of the client secret' }),
  createdAt: Timestamp,
  revokedAt: Type.Union([Timestamp, Type.Null()]),
};

/** An OAuth client (JSON:API resource, id = its `client_id`). */
export const OAuthClientResource = Type.Object({
  type: Type.Literal('oauthClient'),
  id: Type.String(),
  attributes: Type.Object(OAuthClientAttributes),
});

/** The answer of a registration: the client with its secret, shown this once. */
export const RegisteredOAuthClientDocument = Type.Object({
  data: Type.Object({
    type: Type.Literal('oauthClient'),
    id: Type.String(),
    attributes: Type.Object({
      ...OAuthClientAttributes,
      clientSecret: Type.String({ description: 'Shown once; stored as its SHA-256' }),
    }),
  }),
});

export const OAuthClientDocument = Type.Object({ data: OAuthClientResource });

export const OAuthClientListDocument = Type.Object({
  data: Type.Array(OAuthClientResource),
  meta: Type.Object({
    page: Type.Object({ number: Type.Integer(), size: Type.Integer(), total: Type.Integer() }),
  }),
  links: Type.Object({
    self: Type.String(),
    next: Type.Union([Type.String(), Type.Null()]),
    prev: Type.Union([Type.String(), Type.Null()]),
  }),
});

export const ClientParams = Type.Object({ clientId: Type.String({ maxLength: 100 }) });

/** A signing key as operators see it. */
export const SigningKeyRecord = Type.Object({
  kid: Type.String(),
  alg: Type.String(),
  status: StringEnum(['active', 'retired', 'expired'] as const),
  createdAt: Timestamp,
  retiredAt: Type.Union([Timestamp, Type.Null()]),
  publishedUntil: Type.Union([Timestamp, Type.Null()], {
    description: 'Until when the key is in the JWKS (null while active)',
  }),
});
