CREATE TABLE "media_buying"."mcp_sessions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."mcp_sessions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"session_hash" text NOT NULL,
	"endpoint_path" text NOT NULL,
	"principal" text NOT NULL,
	"protocol_version" text NOT NULL,
	"client_name" text NOT NULL,
	"client_version" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	CONSTRAINT "mcp_sessions_session_hash_unique" UNIQUE("session_hash")
);
--> statement-breakpoint
CREATE INDEX "mcp_sessions_expires_idx" ON "media_buying"."mcp_sessions" USING btree ("expires_at");