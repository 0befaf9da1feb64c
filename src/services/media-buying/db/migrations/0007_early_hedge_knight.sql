ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD COLUMN "parent_id" bigint;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD COLUMN "superseded_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "mcp_refresh_tokens_parent_idx" ON "media_buying"."mcp_refresh_tokens" USING btree ("parent_id");