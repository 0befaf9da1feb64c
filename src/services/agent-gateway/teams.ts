/**
 * Teams (spec E: `GET, POST /api/v1/teams`): an ordered list of member agents of the scope. A team run hands the
 * work from one member to the next (each member one step, each hand-off a `team.handoff` run event); the last
 * member's output is the team's.
 */
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db, Executor } from '../../platform/database.ts';
import { prefixedHexId } from '../../platform/ids.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import { badRequest, notFound, versionConflict } from './agent-gateway-errors.ts';
import { agents, teams } from './db/schema.ts';
import type { Scope } from './identity.ts';
import { inScope, pagedRows } from './queries.ts';

/** A team as the API shows it. */
export interface TeamView {
  id: string;
  tenant: string;
  namespace: string;
  name: string;
  description: string;
  members: string[];
  version: number;
  createdAt: string;
  updatedAt: string;
}

function teamView(row: typeof teams.$inferSelect): TeamView {
  return {
    id: row.id,
    tenant: row.tenantId,
    namespace: row.namespaceId,
    name: row.name,
    description: row.description,
    members: row.members,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Teams of a scope. */
export class TeamService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** @throws ApiError 400 `invalid_team` when a member is not an agent of the scope. */
  private async checkMembers(scope: Scope, members: string[], executor: Executor) {
    const found = await executor
      .select({ id: agents.id })
      .from(agents)
      .where(and(inArray(agents.id, members), inScope(agents, scope)));
    const missing = members.filter((m) => !found.some((f) => f.id === m));
    if (missing.length > 0)
      throw badRequest('invalid_team', `Not agents of this scope: ${missing.join(', ')}.`);
  }

  /** Creates a team. @throws ApiError 400 for a member that is not an agent of the scope. */
  async create(
    scope: Scope,
    userId: string | null,
    input: { name: string; description?: string; members: string[] },
    executor: Executor = this.db,
  ): Promise<TeamView> {
    await this.checkMembers(scope, input.members, executor);
    const now = this.clock.now();
    const [row] = await executor
      .insert(teams)
      .values({
        id: prefixedHexId('tem'),
        tenantId: scope.tenant,
        namespaceId: scope.namespace,
        name: input.name,
        description: input.description ?? '',
        members: input.members,
        version: 1,
        createdBy: userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return teamView(row!);
  }

  /** A page of the scope's teams, newest first. */
  async list(scope: Scope, page: PageRequest) {
    const where = and(inScope(teams, scope));
    const { rows, total } = await pagedRows(
      this.db,
      teams,
      where,
      [desc(teams.createdAt), desc(teams.id)],
      page,
    );
    return { items: rows.map(teamView), total };
  }

  /** One team of the scope. @throws ApiError 404. */
  async get(scope: Scope, id: string, executor: Executor = this.db): Promise<TeamView> {
    const [row] = await executor
      .select()
      .from(teams)
      .where(and(eq(teams.id, id), inScope(teams, scope)));
    if (!row) throw notFound('team', id);
    return teamView(row);
  }

  /** The members of a team of the scope, or undefined. */
  async members(scope: Scope, id: string, executor: Executor): Promise<string[] | undefined> {
    const [row] = await executor
      .select({ members: teams.members })
      .from(teams)
      .where(and(eq(teams.id, id), inScope(teams, scope)));
    return row?.members;
  }

  /**
   * Changes a team at `expectedVersion`.
   * @throws ApiError 404; 409 `version_conflict` with the current version; 400 for bad members.
   */
  async update(
    scope: Scope,
    id: string,
    input: { expectedVersion: number; name?: string; description?: string; members?: string[] },
  ): Promise<TeamView> {
    return this.db.transaction(async (tx) => {
      const current = await this.get(scope, id, tx);
      if (input.members) await this.checkMembers(scope, input.members, tx);
      const [row] = await tx
        .update(teams)
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.members !== undefined ? { members: input.members } : {}),
          version: sql`${teams.version} + 1`,
          updatedAt: this.clock.now(),
        })
        .where(and(eq(teams.id, id), eq(teams.version, input.expectedVersion)))
        .returning();
      if (!row) throw versionConflict('team', input.expectedVersion, current.version);
      return teamView(row);
    });
  }
}
