CREATE TABLE "agent_gateway"."endpoint_conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"turn_count" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."endpoint_credentials" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_gateway"."endpoint_credentials_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"kind" text NOT NULL,
	"endpoint_id" text,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"created_by" text,
	"rotated_from" bigint,
	CONSTRAINT "endpoint_credentials_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."endpoint_history" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_gateway"."endpoint_history_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"endpoint_id" text NOT NULL,
	"action" text NOT NULL,
	"release_id" text,
	"user_id" text,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."endpoint_releases" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"number" integer NOT NULL,
	"settings" jsonb NOT NULL,
	"published_by" text,
	"published_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"slug" text NOT NULL,
	"status" text NOT NULL,
	"version" integer NOT NULL,
	"draft" jsonb NOT NULL,
	"current_release_id" text,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."invocation_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_gateway"."invocation_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"invocation_id" text NOT NULL,
	"conversation_id" text,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."invocations" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"release_id" text NOT NULL,
	"kind" text NOT NULL,
	"conversation_id" text,
	"turn" integer,
	"title" text,
	"description" text,
	"input" jsonb NOT NULL,
	"status" text NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"run_id" text,
	"deadline_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"events_pruned_through" bigint DEFAULT 0 NOT NULL,
	"history" jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_gateway"."endpoint_conversations" ADD CONSTRAINT "endpoint_conversations_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "agent_gateway"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."endpoint_credentials" ADD CONSTRAINT "endpoint_credentials_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "agent_gateway"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."endpoint_history" ADD CONSTRAINT "endpoint_history_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "agent_gateway"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."endpoint_releases" ADD CONSTRAINT "endpoint_releases_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "agent_gateway"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."invocations" ADD CONSTRAINT "invocations_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "agent_gateway"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."invocations" ADD CONSTRAINT "invocations_release_id_endpoint_releases_id_fk" FOREIGN KEY ("release_id") REFERENCES "agent_gateway"."endpoint_releases"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "endpoint_credentials_endpoint_idx" ON "agent_gateway"."endpoint_credentials" USING btree ("endpoint_id");--> statement-breakpoint
CREATE INDEX "endpoint_history_endpoint_idx" ON "agent_gateway"."endpoint_history" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "endpoint_releases_number_idx" ON "agent_gateway"."endpoint_releases" USING btree ("endpoint_id","number");--> statement-breakpoint
CREATE UNIQUE INDEX "endpoints_scope_slug_idx" ON "agent_gateway"."endpoints" USING btree ("tenant_id","namespace_id","slug");--> statement-breakpoint
CREATE INDEX "invocation_events_invocation_idx" ON "agent_gateway"."invocation_events" USING btree ("invocation_id","id");--> statement-breakpoint
CREATE INDEX "invocation_events_conversation_idx" ON "agent_gateway"."invocation_events" USING btree ("conversation_id","id");--> statement-breakpoint
CREATE INDEX "invocations_run_idx" ON "agent_gateway"."invocations" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "invocations_status_deadline_idx" ON "agent_gateway"."invocations" USING btree ("status","deadline_at");--> statement-breakpoint
CREATE INDEX "invocations_conversation_idx" ON "agent_gateway"."invocations" USING btree ("conversation_id","turn");