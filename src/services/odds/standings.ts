import type { Outcome, ScheduledGame } from './game-model.ts';
import { hash01 } from './game-model.ts';
import type { SeedTeam } from './reference-data.ts';
import { modelOf, type RecordFormat } from './sport-models.ts';

/**
 * Standings from simulated results: each team's wins, losses, draws and overtime losses, goals for and against, and
 * the order the postseason seeds by; and `teams[].record` written from them.
 */

/** One team's line of a table. */
export interface TableLine {
  team: SeedTeam;
  played: number;
  wins: number;
  /** Losses in regulation (every loss outside hockey). */
  losses: number;
  draws: number;
  /** Hockey losses in overtime or a shootout. */
  overtimeLosses: number;
  scored: number;
  conceded: number;
}

/** A played game with its outcome. */
export interface Result {
  game: ScheduledGame;
  outcome: Outcome;
}

/**
 * The table of `teams` from `results`: a level score is a draw (soccer, penalties included; an MMA draw), otherwise
 * the side with more points wins; a hockey loss after regulation is an overtime loss.
 */
export function tableOf(teams: readonly SeedTeam[], results: readonly Result[]): Map<number, TableLine> {
  const lines = new Map<number, TableLine>(
    teams.map((team) => [
      team.id,
      { team, played: 0, wins: 0, losses: 0, draws: 0, overtimeLosses: 0, scored: 0, conceded: 0 },
    ]),
  );
  for (const { game, outcome } of results) {
    const away = lines.get(game.away.id);
    const home = lines.get(game.home.id);
    const hockey = modelOf(game.sportId).kind === 'hockey';
    const score = (line: TableLine | undefined, own: number, other: number) => {
      if (!line) return;
      line.played += 1;
      line.scored += own;
      line.conceded += other;
      if (own === other) line.draws += 1;
      else if (own > other) line.wins += 1;
      else if (hockey && outcome.extra) line.overtimeLosses += 1;
      else line.losses += 1;
    };
    score(away, outcome.awayScore, outcome.homeScore);
    score(home, outcome.homeScore, outcome.awayScore);
  }
  return lines;
}

/** A team record in its sport's format: `W-L`, `W-L-OTL` (hockey), `W-L-D` (soccer, MMA). */
export function formatRecord(format: RecordFormat, line: TableLine): string {
  if (format === 'W-L-OTL') return `${line.wins}-${line.losses}-${line.overtimeLosses}`;
  if (format === 'W-L-D') return `${line.wins}-${line.losses}-${line.draws}`;
  return `${line.wins}-${line.losses}`;
}

/**
 * `lines` best first: soccer by points (3 a win, 1 a draw), goal difference, goals scored; other sports by win
 * percentage (a draw or an overtime loss counts half a win), then wins; remaining ties by a seeded draw.
 */
export function ranked(seed: string, sportId: number, lines: Iterable<TableLine>): TableLine[] {
  const soccer = modelOf(sportId).kind === 'soccer';
  const key = (l: TableLine): number[] => {
    const tiebreak = hash01(seed, 'tiebreak', l.team.id);
    if (soccer) return [3 * l.wins + l.draws, l.scored - l.conceded, l.scored, tiebreak];
    const pct = l.played === 0 ? 0 : (l.wins + (l.draws + l.overtimeLosses) / 2) / l.played;
    return [pct, l.wins, tiebreak];
  };
  const keyed = [...lines].map((l) => ({ l, k: key(l) }));
  keyed.sort((x, y) => {
    for (let i = 0; i < x.k.length; i += 1) if (x.k[i] !== y.k[i]) return y.k[i]! - x.k[i]!;
    return 0;
  });
  return keyed.map((x) => x.l);
}
