CREATE SCHEMA IF NOT EXISTS "odds";
--> statement-breakpoint
CREATE TABLE "odds"."api_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "odds"."api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"plan" text NOT NULL,
	"rate_limit_per_minute" integer,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "odds"."changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "odds"."changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"change_type" text NOT NULL,
	"event_id" text NOT NULL,
	"sport_id" integer NOT NULL,
	"price_id" bigint,
	"line_id" bigint,
	"affiliate_id" integer,
	"market_id" integer,
	"period_id" integer,
	"participant_id" integer,
	"participant_type" text,
	"line" text,
	"price" integer,
	"previous_price" integer,
	"is_main_line" boolean,
	"event_status" text,
	"score_away" integer,
	"score_home" integer,
	"recorded_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "odds"."event_markets" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "odds"."event_markets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event_id" text NOT NULL,
	"market_id" integer NOT NULL,
	"period_id" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "event_markets_key" UNIQUE("event_id","market_id","period_id")
);
--> statement-breakpoint
CREATE TABLE "odds"."events" (
	"event_id" text PRIMARY KEY NOT NULL,
	"event_uuid" text NOT NULL,
	"sport_id" integer NOT NULL,
	"event_date" timestamp with time zone NOT NULL,
	"rotation_number_away" integer NOT NULL,
	"rotation_number_home" integer NOT NULL,
	"away_team_id" integer NOT NULL,
	"home_team_id" integer NOT NULL,
	"season_type" text NOT NULL,
	"season_year" integer NOT NULL,
	"event_name" text NOT NULL,
	"league_name" text NOT NULL,
	"game_number" integer,
	"game_type" text,
	"status" text NOT NULL,
	"status_detail" text DEFAULT '' NOT NULL,
	"score_away" integer DEFAULT 0 NOT NULL,
	"score_home" integer DEFAULT 0 NOT NULL,
	"score_away_by_period" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"score_home_by_period" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"winner_away" boolean DEFAULT false NOT NULL,
	"winner_home" boolean DEFAULT false NOT NULL,
	"venue_name" text DEFAULT '' NOT NULL,
	"venue_location" text DEFAULT '' NOT NULL,
	"game_clock" integer DEFAULT 0 NOT NULL,
	"display_clock" text DEFAULT '' NOT NULL,
	"game_period" integer DEFAULT 0 NOT NULL,
	"broadcast" text DEFAULT '' NOT NULL,
	"simulation" jsonb,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "events_game_type_check" CHECK ("odds"."events"."game_type" is null or "odds"."events"."game_type" in ('doubleheader', 'makeup', 'doubleheader_makeup'))
);
--> statement-breakpoint
CREATE TABLE "odds"."lines" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "odds"."lines_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event_market_id" bigint NOT NULL,
	"event_id" text NOT NULL,
	"participant_id" integer NOT NULL,
	"participant_type" text NOT NULL,
	"participant_name" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "lines_key" UNIQUE("event_market_id","participant_type","participant_id","value")
);
--> statement-breakpoint
CREATE TABLE "odds"."market_definitions" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "odds"."players" (
	"id" integer PRIMARY KEY NOT NULL,
	"team_id" integer,
	"sport_id" integer NOT NULL,
	"name" text NOT NULL,
	"position" text DEFAULT '' NOT NULL,
	"jersey_number" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "odds"."prices" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "odds"."prices_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"line_id" bigint NOT NULL,
	"event_id" text NOT NULL,
	"sportsbook_id" integer NOT NULL,
	"price" integer NOT NULL,
	"is_main_line" boolean NOT NULL,
	"closed_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "prices_key" UNIQUE("line_id","sportsbook_id"),
	CONSTRAINT "prices_american_check" CHECK ("odds"."prices"."price" <= -100 or "odds"."prices"."price" >= 100)
);
--> statement-breakpoint
CREATE TABLE "odds"."sports" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"abbreviation" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "odds"."sportsbooks" (
	"id" integer PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "odds"."teams" (
	"id" integer PRIMARY KEY NOT NULL,
	"sport_id" integer NOT NULL,
	"name" text NOT NULL,
	"mascot" text NOT NULL,
	"abbreviation" text NOT NULL,
	"record" text DEFAULT '' NOT NULL,
	"conference" text DEFAULT '' NOT NULL,
	"division" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
ALTER TABLE "odds"."event_markets" ADD CONSTRAINT "event_markets_event_id_events_event_id_fk" FOREIGN KEY ("event_id") REFERENCES "odds"."events"("event_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."event_markets" ADD CONSTRAINT "event_markets_market_id_market_definitions_id_fk" FOREIGN KEY ("market_id") REFERENCES "odds"."market_definitions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."events" ADD CONSTRAINT "events_sport_id_sports_id_fk" FOREIGN KEY ("sport_id") REFERENCES "odds"."sports"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."events" ADD CONSTRAINT "events_away_team_id_teams_id_fk" FOREIGN KEY ("away_team_id") REFERENCES "odds"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."events" ADD CONSTRAINT "events_home_team_id_teams_id_fk" FOREIGN KEY ("home_team_id") REFERENCES "odds"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."lines" ADD CONSTRAINT "lines_event_market_id_event_markets_id_fk" FOREIGN KEY ("event_market_id") REFERENCES "odds"."event_markets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."players" ADD CONSTRAINT "players_team_id_teams_id_fk" FOREIGN KEY ("team_id") REFERENCES "odds"."teams"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."players" ADD CONSTRAINT "players_sport_id_sports_id_fk" FOREIGN KEY ("sport_id") REFERENCES "odds"."sports"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."prices" ADD CONSTRAINT "prices_line_id_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "odds"."lines"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."prices" ADD CONSTRAINT "prices_sportsbook_id_sportsbooks_id_fk" FOREIGN KEY ("sportsbook_id") REFERENCES "odds"."sportsbooks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "odds"."teams" ADD CONSTRAINT "teams_sport_id_sports_id_fk" FOREIGN KEY ("sport_id") REFERENCES "odds"."sports"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "changes_price_idx" ON "odds"."changes" USING btree ("price_id","recorded_at");--> statement-breakpoint
CREATE INDEX "changes_line_idx" ON "odds"."changes" USING btree ("line_id","id");--> statement-breakpoint
CREATE INDEX "changes_event_idx" ON "odds"."changes" USING btree ("event_id","id");--> statement-breakpoint
CREATE INDEX "events_sport_date_idx" ON "odds"."events" USING btree ("sport_id","event_date");--> statement-breakpoint
CREATE INDEX "lines_event_idx" ON "odds"."lines" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "players_team_idx" ON "odds"."players" USING btree ("team_id");--> statement-breakpoint
CREATE INDEX "prices_event_idx" ON "odds"."prices" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "teams_sport_idx" ON "odds"."teams" USING btree ("sport_id");