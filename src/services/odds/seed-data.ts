import { sql } from 'drizzle-orm';
import type { Executor } from '../../platform/database.ts';
import { marketDefinitions, players, sports, sportsbooks, teams } from './db/schema.ts';
import { MARKETS, PLAYERS, SPORTS, SPORTSBOOKS, TEAMS } from './reference-data.ts';

/**
 * Writes the reference data (sports, sportsbooks, market definitions, teams, players). Idempotent, so every start runs
 * it: rows already there are kept as they are (an ingest may have renamed a team), except that a team's empty
 * conference and division are filled in; rows added to the data files since the last start are inserted.
 */
export async function seedReferenceData(tx: Executor): Promise<void> {
  await tx.insert(sports).values(SPORTS).onConflictDoNothing();
  await tx
    .insert(sportsbooks)
    .values(SPORTSBOOKS.map(({ id, name, url }) => ({ id, name, url })))
    .onConflictDoNothing();
  await tx.insert(marketDefinitions).values(MARKETS).onConflictDoNothing();
  await tx
    .insert(teams)
    .values(
      TEAMS.map(({ id, sportId, name, mascot, abbreviation, conference, division }) => ({
        id,
        sportId,
        name,
        mascot,
        abbreviation,
        conference,
        division,
      })),
    )
    .onConflictDoUpdate({
      target: teams.id,
      set: { conference: sql`excluded.conference`, division: sql`excluded.division` },
      setWhere: sql`${teams.conference} = '' and ${teams.division} = ''`,
    });
  await tx.insert(players).values(PLAYERS).onConflictDoNothing();
}
