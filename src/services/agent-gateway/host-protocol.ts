/**
 * The runtime host protocol (README "Runtime hosts"): executions of `remote` agents, queued for the runtime hosts
 * of an environment.
 */
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { AgentDefinition } from './agent-runtime.ts';
import type { AgentRow } from './agents.ts';
import { executions } from './db/schema.ts';

/** Remote executions: queueing, claims by hosts, session reports. */
export class HostProtocol {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

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
}
