CREATE SCHEMA IF NOT EXISTS "media_buying";
--> statement-breakpoint
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
CREATE TABLE "media_buying"."advertiser_previews" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."advertiser_previews_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"work_email" text NOT NULL,
	"name" text NOT NULL,
	"company" text NOT NULL,
	"message" text,
	"signup_experience" text,
	"created_at" timestamp with time zone NOT NULL,
	"receipt_mail_id" bigint,
	"client_address" text,
	CONSTRAINT "advertiser_previews_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."advertisers" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."advertisers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"archived_at" timestamp with time zone,
	CONSTRAINT "advertisers_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."agent_registrations" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."agent_registrations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"public_id" text NOT NULL,
	"workload_id" text NOT NULL,
	"state" text NOT NULL,
	"organization_id" bigint,
	"claimed_by_user_id" bigint,
	"provider_account" jsonb,
	"allowance_ends_at" timestamp with time zone NOT NULL,
	CONSTRAINT "agent_registrations_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "agent_registrations_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."alpha_opt_ins" (
	"organization_id" bigint NOT NULL,
	"feature" text NOT NULL,
	"opted_in_at" timestamp with time zone NOT NULL,
	CONSTRAINT "alpha_opt_ins_organization_id_feature_pk" PRIMARY KEY("organization_id","feature")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."audit_logs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."audit_logs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"organization_id" bigint,
	"actor_user_id" bigint,
	"actor_kind" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text,
	"metadata" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
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
CREATE TABLE "media_buying"."buyer_agent_credentials" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."buyer_agent_credentials_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"agent_identifier" text NOT NULL,
	"issued_by_user_id" bigint NOT NULL,
	"replaced_by_id" bigint,
	CONSTRAINT "buyer_agent_credentials_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "buyer_agent_credentials_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."commercial_offers" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."commercial_offers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"title" text NOT NULL,
	"terms" text NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone,
	"decided_by_user_id" bigint,
	CONSTRAINT "commercial_offers_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."identities" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."identities_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"subject" text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"email_verified_at" timestamp with time zone,
	"password_hash" text,
	"password_changed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "identities_subject_unique" UNIQUE("subject"),
	CONSTRAINT "identities_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."invitations" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."invitations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"kind" text NOT NULL,
	"invited_by_user_id" bigint,
	"commercial_offer_id" bigint,
	"accepted_at" timestamp with time zone,
	"accepted_by_user_id" bigint,
	"invitee_name" text,
	CONSTRAINT "invitations_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "invitations_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."legacy_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."legacy_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"permissions" text[] NOT NULL,
	CONSTRAINT "legacy_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "legacy_keys_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."m2m_applications" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."m2m_applications_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"name" text NOT NULL,
	"client_id" text NOT NULL,
	"permissions" text[] NOT NULL,
	"created_by_user_id" bigint NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "m2m_applications_public_id_unique" UNIQUE("public_id"),
	CONSTRAINT "m2m_applications_client_id_unique" UNIQUE("client_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."m2m_client_secrets" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."m2m_client_secrets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"application_id" bigint NOT NULL,
	CONSTRAINT "m2m_client_secrets_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."magic_codes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."magic_codes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"identity_id" bigint NOT NULL,
	"code_hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"consumed_at" timestamp with time zone,
	"pending_password_hash" text
);
--> statement-breakpoint
CREATE TABLE "media_buying"."mail_outbox" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."mail_outbox_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"to_address" text NOT NULL,
	"subject" text NOT NULL,
	"text_body" text NOT NULL,
	"html_body" text,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"transport" text NOT NULL,
	"sent_at" timestamp with time zone,
	"message_id" text,
	"last_error" text
);
--> statement-breakpoint
CREATE TABLE "media_buying"."mcp_access_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."mcp_access_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"grant_id" bigint NOT NULL,
	CONSTRAINT "mcp_access_tokens_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."mcp_grants" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."mcp_grants_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"user_id" bigint NOT NULL,
	"oauth_client_id" bigint NOT NULL,
	"resource" text NOT NULL,
	"scope" text NOT NULL,
	"first_connected_at" timestamp with time zone NOT NULL,
	"last_refreshed_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "mcp_grants_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."mcp_refresh_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."mcp_refresh_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"grant_id" bigint NOT NULL,
	"rotated_at" timestamp with time zone,
	CONSTRAINT "mcp_refresh_tokens_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."memberships" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."memberships_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"organization_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"removed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "media_buying"."oauth_clients" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."oauth_clients_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" text[] NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "oauth_clients_client_id_unique" UNIQUE("client_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."org_api_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."org_api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"permissions" text[] NOT NULL,
	CONSTRAINT "org_api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "org_api_keys_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."organizations" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."organizations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"admitted_at" timestamp with time zone,
	"suspended_at" timestamp with time zone,
	CONSTRAINT "organizations_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."password_resets" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."password_resets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"identity_id" bigint NOT NULL,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "password_resets_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."platform_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."sessions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."sessions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"user_id" bigint NOT NULL,
	"method" text NOT NULL,
	CONSTRAINT "sessions_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."sign_in_states" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."sign_in_states_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"state_hash" text NOT NULL,
	"flow" text NOT NULL,
	"signup_experience" text,
	"secrets_sealed" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"browser_binding_hash" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "sign_in_states_state_hash_unique" UNIQUE("state_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."sign_in_throttle" (
	"bucket" text PRIMARY KEY NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"failures" integer NOT NULL,
	CONSTRAINT "sign_in_throttle_failures_nonnegative" CHECK ("media_buying"."sign_in_throttle"."failures" >= 0)
);
--> statement-breakpoint
CREATE TABLE "media_buying"."signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_jwk_sealed" text,
	"max_token_ttl_seconds" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "media_buying"."signup_recovery_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."signup_recovery_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"identity_id" bigint NOT NULL,
	"subject" text NOT NULL,
	"email" text NOT NULL,
	"signup_experience" text,
	"consumed_at" timestamp with time zone,
	CONSTRAINT "signup_recovery_tokens_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."sso_links" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."sso_links_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"identity_id" bigint NOT NULL,
	"issuer" text NOT NULL,
	"subject" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."storefronts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."storefronts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"adapter_mode" boolean DEFAULT false NOT NULL,
	"currency" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "storefronts_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."terms_acceptances" (
	"user_id" bigint NOT NULL,
	"terms_version_id" bigint NOT NULL,
	"accepted_at" timestamp with time zone NOT NULL,
	CONSTRAINT "terms_acceptances_user_id_terms_version_id_pk" PRIMARY KEY("user_id","terms_version_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."terms_versions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."terms_versions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"version" text NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"published_at" timestamp with time zone NOT NULL,
	CONSTRAINT "terms_versions_version_unique" UNIQUE("version")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."user_api_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."user_api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"public_id" text NOT NULL,
	"user_id" bigint NOT NULL,
	"organization_id" bigint NOT NULL,
	"permissions" text[] NOT NULL,
	CONSTRAINT "user_api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "user_api_keys_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."users" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."users_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"identity_id" bigint NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"active_organization_id" bigint,
	"created_at" timestamp with time zone NOT NULL,
	"disabled_at" timestamp with time zone,
	CONSTRAINT "users_public_id_unique" UNIQUE("public_id"),
	CONSTRAINT "users_identity_id_unique" UNIQUE("identity_id"),
	CONSTRAINT "users_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."widget_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."widget_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"user_id" bigint NOT NULL,
	"organization_id" bigint NOT NULL,
	CONSTRAINT "widget_tokens_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
ALTER TABLE "media_buying"."account_signups" ADD CONSTRAINT "account_signups_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."account_signups" ADD CONSTRAINT "account_signups_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."advertisers" ADD CONSTRAINT "advertisers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."agent_registrations" ADD CONSTRAINT "agent_registrations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."agent_registrations" ADD CONSTRAINT "agent_registrations_claimed_by_user_id_users_id_fk" FOREIGN KEY ("claimed_by_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."alpha_opt_ins" ADD CONSTRAINT "alpha_opt_ins_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."audit_logs" ADD CONSTRAINT "audit_logs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."audit_logs" ADD CONSTRAINT "audit_logs_actor_user_id_users_id_fk" FOREIGN KEY ("actor_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."authorization_codes" ADD CONSTRAINT "authorization_codes_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."buyer_agent_credentials" ADD CONSTRAINT "buyer_agent_credentials_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."buyer_agent_credentials" ADD CONSTRAINT "buyer_agent_credentials_issued_by_user_id_users_id_fk" FOREIGN KEY ("issued_by_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."commercial_offers" ADD CONSTRAINT "commercial_offers_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."commercial_offers" ADD CONSTRAINT "commercial_offers_decided_by_user_id_users_id_fk" FOREIGN KEY ("decided_by_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."invitations" ADD CONSTRAINT "invitations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."invitations" ADD CONSTRAINT "invitations_invited_by_user_id_users_id_fk" FOREIGN KEY ("invited_by_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."invitations" ADD CONSTRAINT "invitations_commercial_offer_id_commercial_offers_id_fk" FOREIGN KEY ("commercial_offer_id") REFERENCES "media_buying"."commercial_offers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."invitations" ADD CONSTRAINT "invitations_accepted_by_user_id_users_id_fk" FOREIGN KEY ("accepted_by_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."legacy_keys" ADD CONSTRAINT "legacy_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."m2m_applications" ADD CONSTRAINT "m2m_applications_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."m2m_applications" ADD CONSTRAINT "m2m_applications_created_by_user_id_users_id_fk" FOREIGN KEY ("created_by_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."m2m_client_secrets" ADD CONSTRAINT "m2m_client_secrets_application_id_m2m_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "media_buying"."m2m_applications"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."magic_codes" ADD CONSTRAINT "magic_codes_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_access_tokens" ADD CONSTRAINT "mcp_access_tokens_grant_id_mcp_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "media_buying"."mcp_grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_grants" ADD CONSTRAINT "mcp_grants_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_grants" ADD CONSTRAINT "mcp_grants_oauth_client_id_oauth_clients_id_fk" FOREIGN KEY ("oauth_client_id") REFERENCES "media_buying"."oauth_clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD CONSTRAINT "mcp_refresh_tokens_grant_id_mcp_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "media_buying"."mcp_grants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."memberships" ADD CONSTRAINT "memberships_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."org_api_keys" ADD CONSTRAINT "org_api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."password_resets" ADD CONSTRAINT "password_resets_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."signup_recovery_tokens" ADD CONSTRAINT "signup_recovery_tokens_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."sso_links" ADD CONSTRAINT "sso_links_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."storefronts" ADD CONSTRAINT "storefronts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."terms_acceptances" ADD CONSTRAINT "terms_acceptances_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."terms_acceptances" ADD CONSTRAINT "terms_acceptances_terms_version_id_terms_versions_id_fk" FOREIGN KEY ("terms_version_id") REFERENCES "media_buying"."terms_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."user_api_keys" ADD CONSTRAINT "user_api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."user_api_keys" ADD CONSTRAINT "user_api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."users" ADD CONSTRAINT "users_identity_id_identities_id_fk" FOREIGN KEY ("identity_id") REFERENCES "media_buying"."identities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."users" ADD CONSTRAINT "users_active_organization_id_organizations_id_fk" FOREIGN KEY ("active_organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."widget_tokens" ADD CONSTRAINT "widget_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."widget_tokens" ADD CONSTRAINT "widget_tokens_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "advertiser_previews_email_idx" ON "media_buying"."advertiser_previews" USING btree ("work_email","created_at");--> statement-breakpoint
CREATE INDEX "advertiser_previews_address_idx" ON "media_buying"."advertiser_previews" USING btree ("client_address","created_at");--> statement-breakpoint
CREATE INDEX "advertisers_org_idx" ON "media_buying"."advertisers" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "audit_logs_org_idx" ON "media_buying"."audit_logs" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "authorization_codes_expires_idx" ON "media_buying"."authorization_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "buyer_agent_credentials_active_uq" ON "media_buying"."buyer_agent_credentials" USING btree ("organization_id","agent_identifier") WHERE "media_buying"."buyer_agent_credentials"."revoked_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "commercial_offers_pending_uq" ON "media_buying"."commercial_offers" USING btree ("organization_id") WHERE "media_buying"."commercial_offers"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "invitations_org_idx" ON "media_buying"."invitations" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "invitations_email_idx" ON "media_buying"."invitations" USING btree ("email");--> statement-breakpoint
CREATE INDEX "legacy_keys_org_idx" ON "media_buying"."legacy_keys" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "m2m_applications_org_idx" ON "media_buying"."m2m_applications" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "m2m_client_secrets_app_idx" ON "media_buying"."m2m_client_secrets" USING btree ("application_id");--> statement-breakpoint
CREATE INDEX "magic_codes_identity_idx" ON "media_buying"."magic_codes" USING btree ("identity_id","id");--> statement-breakpoint
CREATE INDEX "mail_outbox_to_idx" ON "media_buying"."mail_outbox" USING btree ("to_address","id");--> statement-breakpoint
CREATE INDEX "mcp_access_tokens_grant_idx" ON "media_buying"."mcp_access_tokens" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "mcp_grants_user_idx" ON "media_buying"."mcp_grants" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "mcp_refresh_tokens_grant_idx" ON "media_buying"."mcp_refresh_tokens" USING btree ("grant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_active_uq" ON "media_buying"."memberships" USING btree ("organization_id","user_id") WHERE "media_buying"."memberships"."removed_at" is null;--> statement-breakpoint
CREATE INDEX "memberships_user_idx" ON "media_buying"."memberships" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "org_api_keys_org_idx" ON "media_buying"."org_api_keys" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "organizations_kind_idx" ON "media_buying"."organizations" USING btree ("kind","status");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "media_buying"."sessions" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sso_links_issuer_subject_uq" ON "media_buying"."sso_links" USING btree ("issuer","subject");--> statement-breakpoint
CREATE INDEX "storefronts_org_idx" ON "media_buying"."storefronts" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "user_api_keys_user_idx" ON "media_buying"."user_api_keys" USING btree ("user_id","organization_id");