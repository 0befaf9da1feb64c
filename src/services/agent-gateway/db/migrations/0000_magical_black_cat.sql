CREATE SCHEMA IF NOT EXISTS "agent_gateway";
--> statement-breakpoint
CREATE TABLE "agent_gateway"."agent_versions" (
	"agent_id" text NOT NULL,
	"version" integer NOT NULL,
	"kind" text NOT NULL,
	"conversational" boolean NOT NULL,
	"definition" jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "agent_versions_agent_id_version_pk" PRIMARY KEY("agent_id","version")
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."agents" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"kind" text NOT NULL,
	"conversational" boolean NOT NULL,
	"definition" jsonb NOT NULL,
	"version" integer NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"run_id" text NOT NULL,
	"step_id" text NOT NULL,
	"title" text NOT NULL,
	"status" text NOT NULL,
	"decided_by" text,
	"comment" text,
	"created_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."automations" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"name" text NOT NULL,
	"enabled" boolean NOT NULL,
	"trigger" jsonb NOT NULL,
	"target" jsonb NOT NULL,
	"input" jsonb NOT NULL,
	"next_fire_at" timestamp with time zone,
	"last_fired_at" timestamp with time zone,
	"fire_count" integer NOT NULL,
	"version" integer NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."chat_turns" (
	"id" text PRIMARY KEY NOT NULL,
	"chat_id" text NOT NULL,
	"seq" integer NOT NULL,
	"message" text NOT NULL,
	"status" text NOT NULL,
	"reply" jsonb,
	"error" jsonb,
	"agent_version" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."chats" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"owner_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"title" text NOT NULL,
	"archived" boolean NOT NULL,
	"version" integer NOT NULL,
	"turn_count" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."credentials" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_gateway"."credentials_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"kind" text NOT NULL,
	"user_id" text,
	"environment_id" text,
	"execution_id" text,
	"session_id" text,
	CONSTRAINT "credentials_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."orchestration_definitions" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"graph" jsonb NOT NULL,
	"version" integer NOT NULL,
	"published_revision" integer,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."environments" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."executions" (
	"id" text PRIMARY KEY NOT NULL,
	"environment_id" text NOT NULL,
	"run_id" text,
	"step_id" text,
	"turn_id" text,
	"agent_id" text NOT NULL,
	"agent_version" integer NOT NULL,
	"input" jsonb NOT NULL,
	"status" text NOT NULL,
	"attempt" integer NOT NULL,
	"host_id" text,
	"session_id" text,
	"claimed_at" timestamp with time zone,
	"output" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."hosts" (
	"id" text PRIMARY KEY NOT NULL,
	"environment_id" text NOT NULL,
	"credential_id" bigint NOT NULL,
	"name" text NOT NULL,
	"capabilities" jsonb NOT NULL,
	"registered_at" timestamp with time zone NOT NULL,
	"last_heartbeat_at" timestamp with time zone NOT NULL,
	"lease_expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "hosts_credential_id_unique" UNIQUE("credential_id")
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."issue_comments" (
	"id" text PRIMARY KEY NOT NULL,
	"issue_id" text NOT NULL,
	"kind" text NOT NULL,
	"author_type" text NOT NULL,
	"author_id" text,
	"body" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."issues" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"title" text NOT NULL,
	"description" text NOT NULL,
	"status" text NOT NULL,
	"assignee_type" text,
	"assignee_id" text,
	"version" integer NOT NULL,
	"result" jsonb,
	"current_run_id" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."namespaces" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "namespaces_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."orchestration_revisions" (
	"id" text PRIMARY KEY NOT NULL,
	"definition_id" text NOT NULL,
	"revision" integer NOT NULL,
	"graph" jsonb NOT NULL,
	"published_by" text,
	"published_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."role_bindings" (
	"user_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "role_bindings_user_id_tenant_id_namespace_id_pk" PRIMARY KEY("user_id","tenant_id","namespace_id")
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."run_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_gateway"."run_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" text NOT NULL,
	"step_id" text,
	"node_id" text,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."runs" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text NOT NULL,
	"revision" integer,
	"graph" jsonb NOT NULL,
	"status" text NOT NULL,
	"input" jsonb NOT NULL,
	"data" jsonb NOT NULL,
	"output" jsonb,
	"error" jsonb,
	"parent_run_id" text,
	"parent_step_id" text,
	"issue_id" text,
	"automation_id" text,
	"trigger_depth" integer NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."run_signals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_gateway"."run_signals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" text NOT NULL,
	"name" text NOT NULL,
	"payload" jsonb,
	"consumed_by_step" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."run_steps" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"node_id" text NOT NULL,
	"node_type" text NOT NULL,
	"parent_step_id" text,
	"status" text NOT NULL,
	"attempt" integer NOT NULL,
	"input" jsonb,
	"output" jsonb,
	"error" jsonb,
	"arrivals" jsonb NOT NULL,
	"wait" jsonb,
	"due_at" timestamp with time zone,
	"claimed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."teams" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"namespace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"members" jsonb NOT NULL,
	"version" integer NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_gateway"."users" (
	"id" text PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"display_name" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "users_username_unique" UNIQUE("username")
);
--> statement-breakpoint
ALTER TABLE "agent_gateway"."agent_versions" ADD CONSTRAINT "agent_versions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "agent_gateway"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."namespaces" ADD CONSTRAINT "namespaces_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "agent_gateway"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."role_bindings" ADD CONSTRAINT "role_bindings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "agent_gateway"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_gateway"."role_bindings" ADD CONSTRAINT "role_bindings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "agent_gateway"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agents_scope_idx" ON "agent_gateway"."agents" USING btree ("tenant_id","namespace_id","created_at");--> statement-breakpoint
CREATE INDEX "approvals_scope_idx" ON "agent_gateway"."approvals" USING btree ("tenant_id","namespace_id","status");--> statement-breakpoint
CREATE INDEX "automations_due_idx" ON "agent_gateway"."automations" USING btree ("enabled","next_fire_at");--> statement-breakpoint
CREATE UNIQUE INDEX "chat_turns_seq_idx" ON "agent_gateway"."chat_turns" USING btree ("chat_id","seq");--> statement-breakpoint
CREATE INDEX "chats_owner_idx" ON "agent_gateway"."chats" USING btree ("tenant_id","namespace_id","owner_id","created_at");--> statement-breakpoint
CREATE INDEX "credentials_user_idx" ON "agent_gateway"."credentials" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "executions_claimable_idx" ON "agent_gateway"."executions" USING btree ("environment_id","status","created_at");--> statement-breakpoint
CREATE INDEX "issue_comments_issue_idx" ON "agent_gateway"."issue_comments" USING btree ("issue_id","created_at");--> statement-breakpoint
CREATE INDEX "issues_scope_idx" ON "agent_gateway"."issues" USING btree ("tenant_id","namespace_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "revisions_number_idx" ON "agent_gateway"."orchestration_revisions" USING btree ("definition_id","revision");--> statement-breakpoint
CREATE INDEX "run_events_run_idx" ON "agent_gateway"."run_events" USING btree ("run_id","id");--> statement-breakpoint
CREATE INDEX "runs_scope_idx" ON "agent_gateway"."runs" USING btree ("tenant_id","namespace_id","created_at");--> statement-breakpoint
CREATE INDEX "run_signals_run_idx" ON "agent_gateway"."run_signals" USING btree ("run_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "run_steps_node_idx" ON "agent_gateway"."run_steps" USING btree ("run_id","node_id");--> statement-breakpoint
CREATE INDEX "run_steps_status_idx" ON "agent_gateway"."run_steps" USING btree ("status","due_at");