CREATE TABLE "media_buying"."account_signups" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."account_signups_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"user_id" bigint NOT NULL,
	"organization_id" bigint,
	"account_type" text NOT NULL,
	"signup_experience" text,
	"plan" text,
	"signup_code" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "account_signups_user_id_unique" UNIQUE("user_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."authorization_codes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."authorization_codes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"code_hash" text NOT NULL,
	"identity_id" bigint NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "authorization_codes_code_hash_unique" UNIQUE("code_hash")
);
--> statement-breakpoint
ALTER TABLE "media_buying"."magic_codes" ADD COLUMN "pending_password_hash" text;--> statement-breakpoint
ALTER TABLE "media_buying"."account_signups" ADD CONSTRAINT "account_signups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."account_signups" ADD CONSTRAINT "account_signups_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."authorization_codes" ADD CONSTRAINT "authorization_codes_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "authorization_codes_expires_idx" ON "media_buying"."authorization_codes" USING btree ("expires_at");