import type { Tx } from '../../platform/database.ts';
import { marketDefinitions, players, sports, sportsbooks, teams } from './db/schema.ts';
import { MARKETS, PLAYERS, SPORTS, SPORTSBOOKS, TEAMS } from './reference-data.ts';

/** Writes the reference data (sports, sportsbooks, market definitions, teams, players); existing rows are kept. */
export async function seedReferenceData(tx: Tx): Promise<void> {
  await tx.insert(sports).values(SPORTS).onConflictDoNothing();
  await tx
    .insert(sportsbooks)
    .values(SPORTSBOOKS.map(({ id, name, url }) => ({ id, name, url })))
    .onConflictDoNothing();
  await tx.insert(marketDefinitions).values(MARKETS).onConflictDoNothing();
  await tx
    .insert(teams)
    .values(
      TEAMS.map(({ id, sportId, name, mascot, abbreviation }) => ({
        id,
        sportId,
        name,
        mascot,
        abbreviation,
      })),
    )
    .onConflictDoNothing();
  await tx.insert(players).values(PLAYERS).onConflictDoNothing();
}
