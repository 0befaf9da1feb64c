CREATE TABLE "media_buying"."oauth_authorization_codes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."oauth_authorization_codes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"code_hash" text NOT NULL,
	"grant_id" bigint NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"resource" text NOT NULL,
	"scope" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	CONSTRAINT "oauth_authorization_codes_code_hash_unique" UNIQUE("code_hash")
);
--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_grants" ALTER COLUMN "resource" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_access_tokens" ADD COLUMN "family_id" bigint;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD COLUMN "family_id" bigint;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD COLUMN "parent_id" bigint;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD COLUMN "superseded_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "media_buying"."oauth_clients" ADD COLUMN "kind" text DEFAULT 'dynamic' NOT NULL;--> statement-breakpoint
ALTER TABLE "media_buying"."oauth_clients" ADD COLUMN "client_uri" text;--> statement-breakpoint
ALTER TABLE "media_buying"."oauth_clients" ADD COLUMN "metadata_fetched_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "media_buying"."oauth_authorization_codes" ADD CONSTRAINT "oauth_authorization_codes_grant_id_mcp_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "media_buying"."mcp_grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "oauth_authorization_codes_grant_idx" ON "media_buying"."oauth_authorization_codes" USING btree ("grant_id");--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_access_tokens" ADD CONSTRAINT "mcp_access_tokens_family_id_oauth_authorization_codes_id_fk" FOREIGN KEY ("family_id") REFERENCES "media_buying"."oauth_authorization_codes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD CONSTRAINT "mcp_refresh_tokens_family_id_oauth_authorization_codes_id_fk" FOREIGN KEY ("family_id") REFERENCES "media_buying"."oauth_authorization_codes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_grants_active_uq" ON "media_buying"."mcp_grants" USING btree ("user_id","oauth_client_id","resource","organization_id") WHERE "media_buying"."mcp_grants"."revoked_at" is null;--> statement-breakpoint
CREATE INDEX "mcp_refresh_tokens_parent_idx" ON "media_buying"."mcp_refresh_tokens" USING btree ("parent_id");