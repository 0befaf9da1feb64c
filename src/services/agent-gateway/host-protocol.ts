/**
 * The runtime host protocol (spec E identities: runtime host credential, environment key, task or attempt token;
 * README "Runtime hosts"): executions of `remote` agents run outside the service.
 *
 * - A host registers with its host credential (`POST /api/runtime/hosts`, one host per credential, bound to the
 *   credential's environment) and heartbeats (`POST /api/runtime/hosts/heartbeat`), each extending its lease.
 * - It claims executions of its environment with the environment key (`POST /api/runtime/executions/claim`,
 *   naming its host id): each claim is a new attempt with its own session (`ses_...`) and attempt token
 *   (`aga_...`), shown once.
 * - It reports through the attempt token on the runtime session protocol, `/api/sessions/{sessionId}`: events
 *   (recorded as `session.<type>` run events), then `complete` or `fail`.
 * - A host whose lease ran out (by the injected clock) loses its claims: the next claim in the environment takes
 *   them (attempt + 1, a new session and token).
 * - An attempt token works for its own session only (another session's id is a 404), and stops (401
 *   `token_revoked`) when its attempt completes or fails, when another host takes the execution over, or when the
 *   run is cancelled; it expires (401 `token_expired`) after `AGENT_GATEWAY_ATTEMPT_TOKEN_SECONDS` at most.
 *
 * The session protocol's payloads (`{events}`, `{output}`, `{error}`) are not the chat API's (`{message}`); each
 * side refuses the other's body.
 */
import { and, asc, eq, inArray, lte, or } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor, Tx } from '../../platform/database.ts';
import { ApiError } from '../../platform/errors.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import { invalidState, notFound } from './agent-gateway-errors.ts';
import { resumeStepTask } from './agent-gateway-jobs.ts';
import type { AgentDefinition } from './agent-runtime.ts';
import type { AgentRow } from './agents.ts';
import { agents, chatTurns, credentials, executions, hosts } from './db/schema.ts';
import { CREDENTIAL_PREFIXES, type CredentialPrincipal, type CredentialStore } from './identity.ts';
import { appendRunEvents, type NewRunEvent } from './run-events.ts';

type HostRow = typeof hosts.$inferSelect;
type ExecutionRow = typeof executions.$inferSelect;

/** The event types a host may report on a session. */
export const SESSION_EVENT_TYPES = ['progress', 'log', 'message_delta', 'tool_call', 'tool_result'] as const;

/** A host as the API shows it (its lease in `leaseExpiresAt`). */
function hostView(row: HostRow, leaseSeconds: number) {
  return {
    id: row.id,
    environmentId: row.environmentId,
    name: row.name,
    capabilities: row.capabilities,
    registeredAt: row.registeredAt.toISOString(),
    lastHeartbeatAt: row.lastHeartbeatAt.toISOString(),
    leaseExpiresAt: row.leaseExpiresAt.toISOString(),
    heartbeatIntervalSeconds: Math.max(1, Math.floor(leaseSeconds / 3)),
  };
}

/** 409 `session_superseded`: this attempt lost its claim (its host stopped heartbeating) and another took it. */
function sessionSuperseded(sessionId: string): ApiError {
  return new ApiError(
    409,
    'session_superseded',
    `Session '${sessionId}' no longer holds its execution: the claim expired and was taken by another host.`,
  );
}

/** Remote executions: queueing, host registration and leases, claims, session reports. */
export class HostProtocol {
  /**
   * @param leaseSeconds how long a host's claims last after its last heartbeat.
   * @param attemptTokenSeconds how long an attempt token works at most (it stops earlier when its attempt ends or
   *   is taken by another host).
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly keys: CredentialStore,
    private readonly leaseSeconds: number,
    private readonly attemptTokenSeconds: number,
  ) {}

  /**
   * Revokes the attempt tokens of executions `ids` inside `tx` (their attempt ended, was taken by another host, or
   * its run was cancelled): they stop at once on every instance when `tx` commits (401 `token_revoked`).
   */
  async endAttempts(tx: Executor, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.keys.revokeWhere(
      and(eq(credentials.kind, 'attempt'), inArray(credentials.executionId, [...ids]))!,
      tx,
    );
  }

  private async queue(
    tx: Executor,
    input: {
      environmentId: string;
      agentId: string;
      agentVersion: number;
      input: unknown;
      runId?: string;
      stepId?: string;
      turnId?: string;
    },
  ): Promise<string> {
    const id = prefixedHexId('exe');
    await tx.insert(executions).values({
      id,
      environmentId: input.environmentId,
      runId: input.runId ?? null,
      stepId: input.stepId ?? null,
      turnId: input.turnId ?? null,
      agentId: input.agentId,
      agentVersion: input.agentVersion,
      input: input.input ?? null,
      status: 'queued',
      attempt: 0,
      createdAt: this.clock.now(),
    });
    return id;
  }

  /** Queues a remote agent's run step (inside the engine's transaction); returns the execution id. */
  queueForStep(
    tx: Executor,
    input: { runId: string; stepId: string; agent: AgentRow; input: unknown },
  ): Promise<string> {
    const definition = input.agent.definition as Extract<AgentDefinition, { kind: 'remote' }>;
    return this.queue(tx, {
      environmentId: definition.environmentId,
      agentId: input.agent.id,
      agentVersion: input.agent.version,
      input: input.input,
      runId: input.runId,
      stepId: input.stepId,
    });
  }

  /** Queues a remote agent's chat turn (inside the turn's transaction). */
  async queueForTurn(
    tx: Executor,
    input: { turnId: string; agentId: string; agentVersion: number; environmentId: string; input: unknown },
  ): Promise<void> {
    await this.queue(tx, input);
  }

  /** Registers (or re-registers) the host of a host credential; its lease starts now. */
  async register(
    principal: CredentialPrincipal,
    input: { name: string; capabilities?: string[] },
    executor: Executor = this.db,
  ) {
    const now = this.clock.now();
    const lease = new Date(now.getTime() + this.leaseSeconds * 1000);
    const [row] = await executor
      .insert(hosts)
      .values({
        id: prefixedHexId('hst'),
        environmentId: principal.environmentId!,
        credentialId: principal.credentialId,
        name: input.name,
        capabilities: input.capabilities ?? [],
        registeredAt: now,
        lastHeartbeatAt: now,
        leaseExpiresAt: lease,
      })
      .onConflictDoUpdate({
        target: hosts.credentialId,
        set: {
          name: input.name,
          capabilities: input.capabilities ?? [],
          lastHeartbeatAt: now,
          leaseExpiresAt: lease,
        },
      })
      .returning();
    return hostView(row!, this.leaseSeconds);
  }

  /** Extends the lease of the credential's host. @throws ApiError 404 when it never registered. */
  async heartbeat(principal: CredentialPrincipal) {
    const now = this.clock.now();
    const [row] = await this.db
      .update(hosts)
      .set({ lastHeartbeatAt: now, leaseExpiresAt: new Date(now.getTime() + this.leaseSeconds * 1000) })
      .where(eq(hosts.credentialId, principal.credentialId))
      .returning();
    if (!row) throw notFound('host', 'of this credential (register first)');
    const held = await this.db
      .select({ id: executions.id })
      .from(executions)
      .where(and(eq(executions.hostId, row.id), eq(executions.status, 'claimed')));
    return { host: hostView(row, this.leaseSeconds), claims: held.map((h) => h.id) };
  }

  /**
   * The hosts (of one environment, or all) with their lease and the executions they hold, for the operator
   * (`GET /_ops/hosts`): `live` is false once the lease ran out by the injected clock (its claims are then taken by
   * the next claim in the environment).
   */
  async list(environmentId?: string) {
    const now = this.clock.nowMs();
    const rows = await this.db
      .select()
      .from(hosts)
      .where(environmentId === undefined ? undefined : eq(hosts.environmentId, environmentId))
      .orderBy(asc(hosts.registeredAt), asc(hosts.id))
      .limit(500);
    const held =
      rows.length === 0
        ? []
        : await this.db
            .select({
              id: executions.id,
              hostId: executions.hostId,
              attempt: executions.attempt,
              sessionId: executions.sessionId,
              claimedAt: executions.claimedAt,
            })
            .from(executions)
            .where(
              and(
                eq(executions.status, 'claimed'),
                inArray(
                  executions.hostId,
                  rows.map((r) => r.id),
                ),
              ),
            )
            .orderBy(asc(executions.claimedAt));
    return rows.map((row) => ({
      ...hostView(row, this.leaseSeconds),
      live: row.leaseExpiresAt.getTime() > now,
      claims: held
        .filter((c) => c.hostId === row.id)
        .map((c) => ({
          executionId: c.id,
          attempt: c.attempt,
          sessionId: c.sessionId!,
          claimedAt: c.claimedAt!.toISOString(),
        })),
    }));
  }

  /**
   * Claims up to `max` executions of the key's environment for a live host of that environment: queued ones, and
   * claims of hosts whose lease ran out. Each becomes a new attempt with a session and an attempt token.
   * @throws ApiError 404 for a host not in the environment; 409 `invalid_state` for a host whose lease ran out.
   */
  async claim(principal: CredentialPrincipal, input: { hostId: string; max: number }, db: Db | Tx = this.db) {
    const now = this.clock.now();
    return db.transaction(async (tx) => {
      const [host] = await tx
        .select()
        .from(hosts)
        .where(and(eq(hosts.id, input.hostId), eq(hosts.environmentId, principal.environmentId!)));
      if (!host) throw notFound('host', input.hostId);
      if (host.leaseExpiresAt.getTime() <= now.getTime())
        throw invalidState(`Host '${host.id}' missed its heartbeat; heartbeat before claiming.`);
      const expiredHosts = tx
        .select({ id: hosts.id })
        .from(hosts)
        .where(and(eq(hosts.environmentId, principal.environmentId!), lte(hosts.leaseExpiresAt, now)));
      const candidates = await tx
        .select()
        .from(executions)
        .where(
          and(
            eq(executions.environmentId, principal.environmentId!),
            or(
              eq(executions.status, 'queued'),
              and(eq(executions.status, 'claimed'), inArray(executions.hostId, expiredHosts)),
            ),
          ),
        )
        .orderBy(asc(executions.createdAt), asc(executions.id))
        .limit(input.max)
        .for('update', { skipLocked: true });
      const events: NewRunEvent[] = [];
      const claimed = [];
      for (const exe of candidates) {
        const sessionId = prefixedHexId('ses');
        const [row] = await tx
          .update(executions)
          .set({ status: 'claimed', attempt: exe.attempt + 1, hostId: host.id, sessionId, claimedAt: now })
          .where(eq(executions.id, exe.id))
          .returning();
        // The attempt this claim takes over (its host missed its lease) stops reporting.
        if (exe.status === 'claimed') await this.endAttempts(tx, [exe.id]);
        const token = await this.keys.issue(tx, {
          prefix: CREDENTIAL_PREFIXES.attempt,
          label: `attempt ${row!.attempt} of ${exe.id}`,
          expiresAt: new Date(now.getTime() + this.attemptTokenSeconds * 1000),
          values: { kind: 'attempt', executionId: exe.id, sessionId, environmentId: principal.environmentId },
        });
        const [agent] = await tx.select().from(agents).where(eq(agents.id, exe.agentId));
        if (exe.runId)
          events.push({
            runId: exe.runId,
            stepId: exe.stepId,
            type: exe.status === 'claimed' ? 'execution.reclaimed' : 'execution.claimed',
            data: { executionId: exe.id, hostId: host.id, attempt: row!.attempt, previousHostId: exe.hostId },
          });
        claimed.push({
          id: exe.id,
          sessionId,
          attempt: row!.attempt,
          attemptToken: token.key,
          sessionUrl: `/api/sessions/${sessionId}`,
          agent: {
            id: exe.agentId,
            version: exe.agentVersion,
            instructions: (agent?.definition as { instructions?: unknown } | undefined)?.instructions ?? null,
          },
          input: exe.input,
          source: exe.runId
            ? { type: 'run' as const, id: exe.runId }
            : { type: 'chat_turn' as const, id: exe.turnId },
        });
      }
      await appendRunEvents(tx, events, now);
      return { executions: claimed };
    });
  }

  /**
   * The execution an attempt token reports on, locked.
   * @throws ApiError 404 for another session's id; 409 `session_superseded` when the claim was taken by another
   *   host; 409 `invalid_state` when the execution already finished.
   */
  private async held(
    executor: Executor,
    principal: CredentialPrincipal,
    sessionId: string,
  ): Promise<ExecutionRow> {
    if (principal.sessionId !== sessionId) throw notFound('session', sessionId);
    const [exe] = await executor
      .select()
      .from(executions)
      .where(eq(executions.id, principal.executionId!))
      .for('update');
    if (!exe) throw notFound('session', sessionId);
    if (exe.sessionId !== sessionId) throw sessionSuperseded(sessionId);
    if (exe.status !== 'claimed')
      throw invalidState(`The execution of session '${sessionId}' is ${exe.status}.`, { status: exe.status });
    return exe;
  }

  /** The state of a session (`GET /api/sessions/{id}`). @throws ApiError 404, 409. */
  async session(principal: CredentialPrincipal, sessionId: string) {
    if (principal.sessionId !== sessionId) throw notFound('session', sessionId);
    const [exe] = await this.db.select().from(executions).where(eq(executions.id, principal.executionId!));
    if (!exe) throw notFound('session', sessionId);
    return {
      session: {
        id: sessionId,
        executionId: exe.id,
        attempt: exe.attempt,
        current: exe.sessionId === sessionId,
        status: exe.status,
        input: exe.input,
      },
    };
  }

  /** Records a host's session events (as `session.<type>` run events of the execution's run). @throws ApiError. */
  async report(
    principal: CredentialPrincipal,
    sessionId: string,
    events: { type: string; data?: unknown }[],
  ) {
    return this.db.transaction(async (tx) => {
      const exe = await this.held(tx, principal, sessionId);
      if (exe.runId)
        await appendRunEvents(
          tx,
          events.map((e) => ({
            runId: exe.runId!,
            stepId: exe.stepId,
            type: `session.${e.type}`,
            data: { sessionId, attempt: exe.attempt, data: e.data ?? null },
          })),
          this.clock.now(),
        );
      return { accepted: events.length };
    });
  }

  /**
   * Completes or fails a session's execution: a run step moves on (through `agent-gateway:resume-step`), a chat
   * turn gets its reply or its error.
   * @throws ApiError 404, 409 (`session_superseded`, `invalid_state`).
   */
  async finish(
    principal: CredentialPrincipal,
    sessionId: string,
    outcome: { output: unknown } | { error: { code: string; message: string } },
  ) {
    return this.db.transaction(async (tx) => {
      const exe = await this.held(tx, principal, sessionId);
      const now = this.clock.now();
      const ok = 'output' in outcome;
      const [row] = await tx
        .update(executions)
        .set({
          status: ok ? 'completed' : 'failed',
          output: ok ? (outcome.output ?? null) : null,
          error: ok ? null : outcome.error,
          finishedAt: now,
        })
        .where(eq(executions.id, exe.id))
        .returning();
      await this.endAttempts(tx, [exe.id]);
      if (exe.stepId) await resumeStepTask.enqueue(tx, { stepId: exe.stepId });
      if (exe.turnId) {
        const text = ok ? replyText(outcome.output) : null;
        await tx
          .update(chatTurns)
          .set({
            status: ok ? 'completed' : 'failed',
            reply: ok ? { text: text!, data: outcome.output ?? null } : null,
            error: ok ? null : outcome.error,
            completedAt: now,
          })
          .where(eq(chatTurns.id, exe.turnId));
      }
      if (exe.runId)
        await appendRunEvents(
          tx,
          [
            {
              runId: exe.runId,
              stepId: exe.stepId,
              type: ok ? 'execution.completed' : 'execution.failed',
              data: { executionId: exe.id, sessionId, attempt: exe.attempt },
            },
          ],
          now,
        );
      return { execution: { id: row!.id, status: row!.status, attempt: row!.attempt } };
    });
  }
}

/** The text of a reply from a host's output: its `text` when it is a string, else the output as JSON. */
function replyText(output: unknown): string {
  if (output && typeof output === 'object' && typeof (output as { text?: unknown }).text === 'string')
    return (output as { text: string }).text;
  return typeof output === 'string' ? output : JSON.stringify(output ?? null);
}
