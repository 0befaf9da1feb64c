import type { ServiceApp } from '../../../platform/http.ts';
import {
  AffiliatesResponse,
  MarketsResponse,
  PlayerParams,
  PlayerResponse,
  PlayersResponse,
  SportParams,
  SportsResponse,
  TeamParams,
  TeamResponse,
  TeamsResponse,
} from '../odds-schemas.ts';
import { errors, type OddsRouteContext, security } from './context.ts';

/** Registers the team, player and reference routes. */
export function registerReferenceRoutes(app: ServiceApp, ctx: OddsRouteContext) {
  const { onRequest } = ctx;
  app.get(
    '/api/v2/teams/:teamID',
    {
      onRequest,
      schema: {
        operationId: 'getTeam',
        tags: ['teams'],
        summary: 'A team',
        security,
        params: TeamParams,
        response: { 200: TeamResponse, ...errors },
      },
    },
    async (request) => ({ team: await ctx.catalog.team(request.params.teamID) }),
  );

  app.get(
    '/api/v2/teams/:teamID/players',
    {
      onRequest,
      schema: {
        operationId: 'listTeamPlayers',
        tags: ['teams'],
        summary: 'The players of a team',
        description: '`player_id` is the `participant.id` of TYPE_PLAYER participants (player props).',
        security,
        params: TeamParams,
        response: { 200: PlayersResponse, ...errors },
      },
    },
    async (request) => ({ players: await ctx.catalog.teamPlayers(request.params.teamID) }),
  );

  app.get(
    '/api/v2/players/:playerID',
    {
      onRequest,
      schema: {
        operationId: 'getPlayer',
        tags: ['teams'],
        summary: 'A player',
        security,
        params: PlayerParams,
        response: { 200: PlayerResponse, ...errors },
      },
    },
    async (request) => ({ player: await ctx.catalog.player(request.params.playerID) }),
  );

  app.get(
    '/api/v2/sports/:sportID/teams',
    {
      onRequest,
      schema: {
        operationId: 'listSportTeams',
        tags: ['teams'],
        summary: 'The teams of a sport',
        security,
        params: SportParams,
        response: { 200: TeamsResponse, ...errors },
      },
    },
    async (request) => ({ teams: await ctx.catalog.sportTeams(request.params.sportID) }),
  );

  app.get(
    '/api/v2/sports',
    {
      onRequest,
      schema: {
        operationId: 'listSports',
        tags: ['reference'],
        summary: 'Sports and their ids',
        security,
        response: { 200: SportsResponse, ...errors },
      },
    },
    async () => ({ sports: await ctx.catalog.sports() }),
  );

  app.get(
    '/api/v2/affiliates',
    {
      onRequest,
      schema: {
        operationId: 'listAffiliates',
        tags: ['reference'],
        summary: 'Sportsbooks (affiliates) and their ids',
        security,
        response: { 200: AffiliatesResponse, ...errors },
      },
    },
    async () => ({ affiliates: await ctx.catalog.sportsbooks() }),
  );

  app.get(
    '/api/v2/markets',
    {
      onRequest,
      schema: {
        operationId: 'listMarkets',
        tags: ['reference'],
        summary: 'Market definitions and their ids',
        security,
        response: { 200: MarketsResponse, ...errors },
      },
    },
    async () => ({ markets: await ctx.catalog.markets() }),
  );
}
