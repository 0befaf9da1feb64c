/**
 * Server-side state of the OAuth and SSO sign-in round trips (spec "Authentication", rule 6; "Errors",
 * `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE`): `GET /auth/url` and `GET /auth/sso/url` store the routing intent
 * (`signup_experience`), the PKCE verifier and the nonce under an opaque one-time `state`; `POST /auth/token` and
 * `POST /auth/sso/callback` read it back and consume it.
 *
 * - The state is a random secret (256 bits, URL-safe base64 after a prefix); the table keeps its SHA-256 only. The
 *   verifier and nonce are sealed with AES-256-GCM, bound to the state's hash. It lives {@link STATE_SECONDS} and is
 *   consumed by the sign-in it completes (in that sign-in's transaction, so a refused callback leaves it usable and
 *   two concurrent callbacks complete one sign-in).
 * - The state is bound to the browser that started the round trip: the start sets a `mb_signin` cookie (HttpOnly,
 *   SameSite=Lax; one secret per browser, reused by its concurrent round trips) whose SHA-256 the state keeps, and the
 *   callback must carry the same cookie. Whoever learns a callback URL (code and state) cannot finish the sign-in in
 *   another browser, and an attacker cannot push their own code and state into a victim's browser (login CSRF): both
 *   are refused as an `unavailable` state.
 * - The prefix says whether the flow carries routing intent: `mbsx_` with a `signup_experience`, `mbst_` without.
 *   It is how a callback whose state cannot be found, or is damaged, is classified (the stored row decides whenever
 *   there is one): a routing-intent state that is unknown, consumed, expired, for the other flow, or malformed
 *   (the `mbsx_` prefix with anything but 43 URL-safe base64 characters after it) is a flat 503
 *   `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` (restart sign-in); any other bad state is the legacy answer, a 422
 *   `VALIDATION_ERROR` on `state`. A state that fails to be stored, or a store that cannot be read, is the same flat
 *   503 for a routing-intent flow and a 503 `SERVICE_UNAVAILABLE` envelope otherwise.
 */
import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import { constantTimeEqual, hashApiKey, type SecretBox } from '../../../platform/crypto.ts';
import type { Db, Executor } from '../../../platform/database.ts';
import { randomToken } from '../../../platform/ids.ts';
import type { AppLogger } from '../../../platform/logger.ts';
import { type SIGN_IN_FLOWS, signInStates } from '../db/schema.ts';
import {
  semanticValidation,
  serviceUnavailable,
  signupExperienceStateUnavailable,
} from '../media-buying-errors.ts';

/** The cookie that binds round trips to the browser that started them (module comment). */
export const BROWSER_BINDING_COOKIE = 'mb_signin';

/** The form of a browser binding secret (256 bits, URL-safe base64). */
const BINDING_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The browser binding to use for a new round trip: the one the browser already holds (its concurrent round trips
 * share it), or a new one.
 */
export function browserBinding(presented: string | undefined): string {
  return presented !== undefined && BINDING_PATTERN.test(presented) ? presented : randomToken(32);
}

/** Lifetime of a sign-in state, in seconds (ten minutes). */
export const STATE_SECONDS = 10 * 60;

/** State prefixes: with routing intent (`signup_experience`) and without. */
export const STATE_PREFIX = { routed: 'mbsx_', plain: 'mbst_' } as const;

/** The routing metadata of a sign-in (spec "Sign-in and signup"): it grants nothing. */
export const SIGNUP_EXPERIENCES = [
  'ADVERTISER',
  'ADVERTISER_PORTFOLIO',
  'MEDIA_COMPANY',
  'DEVELOPER',
] as const;
export type SignupExperience = (typeof SIGNUP_EXPERIENCES)[number];

/** A round trip: the hosted sign-in (`auth`) or SSO (`sso`). */
export type SignInFlow = (typeof SIGN_IN_FLOWS)[number];

/** What a flow keeps secret across the round trip. */
export interface FlowSecrets {
  /** The PKCE code verifier (RFC 7636). */
  codeVerifier: string;
  /** The OpenID Connect nonce (SSO only). */
  nonce?: string;
}

/** Why a callback's state is refused (the cases of `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE`). */
export type StateFailure = 'unavailable' | 'expired' | 'malformed' | 'wrong_flow';

/** A state read back for its callback. */
export interface ReadState {
  id: number;
  flow: SignInFlow;
  signupExperience: SignupExperience | null;
  redirectUri: string;
  secrets: FlowSecrets;
}

const STATE_PATTERN = /^(mbsx|mbst)_[A-Za-z0-9_-]{43}$/;
const FLOW_NAMES: Record<SignInFlow, string> = { auth: 'hosted sign-in', sso: 'SSO sign-in' };

/**
 * The error of a refused state: the flat 503 for a routing-intent flow, the legacy 422 otherwise (module comment).
 */
export function stateError(failure: StateFailure, routed: boolean, flow: SignInFlow) {
  if (routed) {
    const reasons: Record<StateFailure, string> = {
      unavailable: `The ${FLOW_NAMES[flow]} state is unknown or was already used`,
      expired: `The ${FLOW_NAMES[flow]} state expired`,
      malformed: `The ${FLOW_NAMES[flow]} state is malformed`,
      wrong_flow: `The state belongs to another sign-in flow than ${FLOW_NAMES[flow]}`,
    };
    return signupExperienceStateUnavailable(
      `${reasons[failure]}; restart sign-in (do not rebuild the state).`,
    );
  }
  const legacy: Record<StateFailure, string> = {
    unavailable: 'is unknown or was already used; restart sign-in',
    expired: 'expired; restart sign-in',
    malformed: 'is not a state this service issued; restart sign-in',
    wrong_flow: `belongs to another sign-in flow than ${FLOW_NAMES[flow]}; restart sign-in`,
  };
  return semanticValidation([{ location: 'body', field: 'state', message: legacy[failure] }]);
}

/** The sign-in states; see the module comment. */
export class SignInStates {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly secrets: SecretBox,
    private readonly logger: AppLogger,
  ) {}

  /**
   * Stores a new state.
   * @returns the state (for the authorization URL) and when it expires.
   * @throws ApiError 503 `SIGNUP_EXPERIENCE_STATE_UNAVAILABLE` (flat) when a routing-intent state cannot be stored,
   *   503 `SERVICE_UNAVAILABLE` when another cannot.
   */
  async create(input: {
    flow: SignInFlow;
    signupExperience: SignupExperience | null;
    secrets: FlowSecrets;
    redirectUri: string;
    /** The browser binding ({@link browserBinding}) the callback must present. */
    binding: string;
  }): Promise<{ state: string; expiresAt: Date }> {
    const routed = input.signupExperience !== null;
    const state = `${routed ? STATE_PREFIX.routed : STATE_PREFIX.plain}${randomToken(32)}`;
    const stateHash = hashApiKey(state);
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + STATE_SECONDS * 1000);
    try {
      await this.db.insert(signInStates).values({
        stateHash,
        flow: input.flow,
        signupExperience: input.signupExperience,
        secretsSealed: this.secrets.encrypt(JSON.stringify(input.secrets), `sign-in-state:${stateHash}`),
        redirectUri: input.redirectUri,
        browserBindingHash: hashApiKey(input.binding),
        createdAt: now,
        expiresAt,
      });
    } catch (err) {
      this.logger.error({ err, flow: input.flow, routed }, 'sign-in state could not be stored');
      throw routed
        ? signupExperienceStateUnavailable(
            'The sign-in state with your signup choice could not be stored; retry in a moment.',
          )
        : serviceUnavailable('Sign-in cannot start right now; retry in a moment.');
    }
    return { state, expiresAt };
  }

  /**
   * Reads the state of a callback of `flow` (without consuming it), presented with the callback browser's binding.
   * @throws ApiError for a refused state ({@link stateError}; a missing or other browser's binding is `unavailable`),
   *   or when the store cannot be read (503, flat for a routing-intent state by its prefix).
   */
  async read(state: string, flow: SignInFlow, binding: string | undefined): Promise<ReadState> {
    const prefixRouted = state.startsWith(STATE_PREFIX.routed);
    if (!STATE_PATTERN.test(state)) throw stateError('malformed', prefixRouted, flow);
    const stateHash = hashApiKey(state);
    let row: typeof signInStates.$inferSelect | undefined;
    try {
      [row] = await this.db.select().from(signInStates).where(eq(signInStates.stateHash, stateHash)).limit(1);
    } catch (err) {
      this.logger.error({ err, flow, routed: prefixRouted }, 'sign-in state could not be read');
      throw prefixRouted
        ? signupExperienceStateUnavailable('The sign-in state cannot be read right now; restart sign-in.')
        : serviceUnavailable('Sign-in cannot complete right now; retry in a moment.');
    }
    if (!row || row.consumedAt) throw stateError('unavailable', prefixRouted, flow);
    const routed = row.signupExperience !== null;
    if (binding === undefined || !constantTimeEqual(hashApiKey(binding), row.browserBindingHash))
      throw stateError('unavailable', routed, flow);
    if (row.flow !== flow) throw stateError('wrong_flow', routed, flow);
    if (row.expiresAt.getTime() <= this.clock.nowMs()) throw stateError('expired', routed, flow);
    let secrets: FlowSecrets;
    try {
      secrets = JSON.parse(
        this.secrets.decrypt(row.secretsSealed, `sign-in-state:${stateHash}`),
      ) as FlowSecrets;
    } catch {
      // Sealed under another secrets key (a key change since): as good as lost.
      throw stateError('unavailable', routed, flow);
    }
    return {
      id: row.id,
      flow: row.flow,
      signupExperience: row.signupExperience as SignupExperience | null,
      redirectUri: row.redirectUri,
      secrets,
    };
  }

  /**
   * Consumes a state in the transaction of the sign-in it completes.
   * @throws ApiError the `unavailable` refusal when another callback consumed it first.
   */
  async consume(tx: Executor, read: ReadState): Promise<void> {
    const done = await tx
      .update(signInStates)
      .set({ consumedAt: this.clock.now() })
      .where(and(eq(signInStates.id, read.id), isNull(signInStates.consumedAt)))
      .returning({ id: signInStates.id });
    if (done.length === 0) throw stateError('unavailable', read.signupExperience !== null, read.flow);
  }

  /** Deletes states that expired more than a day ago (housekeeping). @returns how many. */
  async prune(): Promise<number> {
    const before = new Date(this.clock.nowMs() - 86_400_000);
    const deleted = await this.db
      .delete(signInStates)
      .where(lt(signInStates.expiresAt, before))
      .returning({ id: signInStates.id });
    return deleted.length;
  }
}
