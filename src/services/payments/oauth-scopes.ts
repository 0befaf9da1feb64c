/**
 * The OAuth scopes of the payments API (RFC 6749 section 3.3): what an access token may do. They divide exactly what
 * an agent key may do (README "Credentials and rights"), so a token never does more than an agent key of its party;
 * what only an API key may do (set limits, issue or revoke agent keys, create customer parties, register or revoke
 * OAuth clients) has no scope at all.
 */

/** Every scope, with what it allows (the OpenAPI `oauth2` scheme and the RFC 8414 metadata list them). */
export const SCOPES = {
  'payment_intents:read': 'Read and list payment intents',
  'payment_intents:write': 'Create payment intents, replace their line items, cancel them',
  'card_payments:read': 'Read card payments',
  'voice_sessions:read': 'Read voice sessions',
  'voice_sessions:write': 'Start voice sessions and drive their simulation (keyed card, hang-up)',
  'parties:read': 'Read the caller’s party and its customer parties',
  'compliance:read': 'Read compliance status and compliance sessions',
  'limits:read': 'Read the per-transaction limit',
} as const;

/** A scope name. */
export type Scope = keyof typeof SCOPES;

/** Every scope name, in the order of {@link SCOPES}. */
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

/** True for a scope this service defines. */
export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/**
 * Parses a `scope` value (RFC 6749 section 3.3: scope tokens separated by single spaces, each `%x21 / %x23-5B /
 * %x5D-7E`), keeping the order and dropping repeats.
 * @returns the tokens, or undefined when the value is not a well-formed scope list (empty, doubled or edge spaces,
 *   characters outside the grammar).
 */
export function parseScopeList(value: string): string[] | undefined {
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(value)) return undefined;
  return [...new Set(value.split(' '))];
}

/** The scopes of `granted` that this service defines, in {@link SCOPES} order (unknown names are ignored). */
export function knownScopes(granted: Iterable<string>): Scope[] {
  const set = new Set(granted);
  return SCOPE_NAMES.filter((s) => set.has(s));
}
