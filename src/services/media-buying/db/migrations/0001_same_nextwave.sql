CREATE TABLE "media_buying"."activation_claims" (
	"registration_id" bigint PRIMARY KEY NOT NULL,
	"code_hash" text NOT NULL,
	"claimed_at" timestamp with time zone,
	CONSTRAINT "activation_claims_code_hash_unique" UNIQUE("code_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."activation_enrolments" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."activation_enrolments_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"workload_id" text NOT NULL,
	"agent_name" text NOT NULL,
	"assertion_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"assertion_expires_at" timestamp with time zone NOT NULL,
	"exchanged_at" timestamp with time zone,
	"registration_id" bigint,
	CONSTRAINT "activation_enrolments_public_id_unique" UNIQUE("public_id"),
	CONSTRAINT "activation_enrolments_assertion_id_unique" UNIQUE("assertion_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."activation_provider_connections" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."activation_provider_connections_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"registration_id" bigint NOT NULL,
	"provider" text NOT NULL,
	"provider_account_id" text NOT NULL,
	"connected_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."advertiser_accounts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."advertiser_accounts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"advertiser_id" bigint NOT NULL,
	"storefront_id" bigint NOT NULL,
	"seller_organization_id" bigint NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"operator" text NOT NULL,
	"currency" text NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "advertiser_accounts_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."buyer_operator_identities" (
	"organization_id" bigint PRIMARY KEY NOT NULL,
	"domain" text NOT NULL,
	"name" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."campaigns" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."campaigns_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"advertiser_id" bigint NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"currency" text NOT NULL,
	"budget_total_minor" bigint NOT NULL,
	"flight_start" timestamp with time zone NOT NULL,
	"flight_end" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "campaigns_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."creatives" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."creatives_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"advertiser_id" bigint NOT NULL,
	"name" text NOT NULL,
	"format_id" jsonb NOT NULL,
	"assets" jsonb NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "creatives_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."delivery_metrics" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."delivery_metrics_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"organization_id" bigint NOT NULL,
	"media_buy_id" bigint NOT NULL,
	"package_id" bigint NOT NULL,
	"day" date NOT NULL,
	"impressions" bigint NOT NULL,
	"clicks" bigint NOT NULL,
	"spend_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."discovery_sessions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."discovery_sessions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"advertiser_id" bigint NOT NULL,
	"quote_day" date NOT NULL,
	"groups" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "discovery_sessions_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."human_feedback" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."human_feedback_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"media_buy_id" bigint,
	"author_user_id" bigint,
	"rating" integer NOT NULL,
	"comment" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "human_feedback_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."measurement_records" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."measurement_records_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"details" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "measurement_records_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."media_buys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."media_buys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"advertiser_id" bigint NOT NULL,
	"campaign_id" bigint NOT NULL,
	"storefront_id" bigint NOT NULL,
	"sales_agent_id" bigint NOT NULL,
	"seller_organization_id" bigint NOT NULL,
	"advertiser_account_id" bigint,
	"operator" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"currency" text NOT NULL,
	"total_budget_minor" bigint NOT NULL,
	"platform_fee_bps" integer NOT NULL,
	"start_time" timestamp with time zone NOT NULL,
	"end_time" timestamp with time zone NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"confirmed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "media_buys_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."packages" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."packages_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"media_buy_id" bigint NOT NULL,
	"product_id" bigint NOT NULL,
	"pricing_option_id" text NOT NULL,
	"budget_minor" bigint NOT NULL,
	"impressions" bigint,
	"paused" boolean DEFAULT false NOT NULL,
	"canceled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "packages_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."pricing_rules" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."pricing_rules_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"sales_agent_id" bigint NOT NULL,
	"platform_fee_bps" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "pricing_rules_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."products" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."products_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"storefront_id" bigint NOT NULL,
	"sales_agent_id" bigint,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"delivery_type" text NOT NULL,
	"channels" jsonb NOT NULL,
	"format_ids" jsonb NOT NULL,
	"publisher_properties" jsonb NOT NULL,
	"pricing_options" jsonb NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "products_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."sales_agents" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."sales_agents_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"storefront_id" bigint NOT NULL,
	"name" text NOT NULL,
	"agent_url" text,
	"capabilities" jsonb NOT NULL,
	"currency" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"archived_at" timestamp with time zone,
	CONSTRAINT "sales_agents_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."test_cohorts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."test_cohorts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"advertiser_id" bigint NOT NULL,
	"name" text NOT NULL,
	"holdout_percent" integer NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "test_cohorts_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
ALTER TABLE "media_buying"."activation_claims" ADD CONSTRAINT "activation_claims_registration_id_agent_registrations_id_fk" FOREIGN KEY ("registration_id") REFERENCES "media_buying"."agent_registrations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."activation_enrolments" ADD CONSTRAINT "activation_enrolments_registration_id_agent_registrations_id_fk" FOREIGN KEY ("registration_id") REFERENCES "media_buying"."agent_registrations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."activation_provider_connections" ADD CONSTRAINT "activation_provider_connections_registration_id_agent_registrations_id_fk" FOREIGN KEY ("registration_id") REFERENCES "media_buying"."agent_registrations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."advertiser_accounts" ADD CONSTRAINT "advertiser_accounts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."advertiser_accounts" ADD CONSTRAINT "advertiser_accounts_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "media_buying"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."advertiser_accounts" ADD CONSTRAINT "advertiser_accounts_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."advertiser_accounts" ADD CONSTRAINT "advertiser_accounts_seller_organization_id_organizations_id_fk" FOREIGN KEY ("seller_organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."buyer_operator_identities" ADD CONSTRAINT "buyer_operator_identities_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."campaigns" ADD CONSTRAINT "campaigns_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."campaigns" ADD CONSTRAINT "campaigns_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "media_buying"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD CONSTRAINT "creatives_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD CONSTRAINT "creatives_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "media_buying"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."delivery_metrics" ADD CONSTRAINT "delivery_metrics_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."delivery_metrics" ADD CONSTRAINT "delivery_metrics_media_buy_id_media_buys_id_fk" FOREIGN KEY ("media_buy_id") REFERENCES "media_buying"."media_buys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."delivery_metrics" ADD CONSTRAINT "delivery_metrics_package_id_packages_id_fk" FOREIGN KEY ("package_id") REFERENCES "media_buying"."packages"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."discovery_sessions" ADD CONSTRAINT "discovery_sessions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."discovery_sessions" ADD CONSTRAINT "discovery_sessions_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "media_buying"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."human_feedback" ADD CONSTRAINT "human_feedback_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."human_feedback" ADD CONSTRAINT "human_feedback_media_buy_id_media_buys_id_fk" FOREIGN KEY ("media_buy_id") REFERENCES "media_buying"."media_buys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."human_feedback" ADD CONSTRAINT "human_feedback_author_user_id_users_id_fk" FOREIGN KEY ("author_user_id") REFERENCES "media_buying"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."measurement_records" ADD CONSTRAINT "measurement_records_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "media_buying"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "media_buying"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_sales_agent_id_sales_agents_id_fk" FOREIGN KEY ("sales_agent_id") REFERENCES "media_buying"."sales_agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_seller_organization_id_organizations_id_fk" FOREIGN KEY ("seller_organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buys" ADD CONSTRAINT "media_buys_advertiser_account_id_advertiser_accounts_id_fk" FOREIGN KEY ("advertiser_account_id") REFERENCES "media_buying"."advertiser_accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."packages" ADD CONSTRAINT "packages_media_buy_id_media_buys_id_fk" FOREIGN KEY ("media_buy_id") REFERENCES "media_buying"."media_buys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."packages" ADD CONSTRAINT "packages_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "media_buying"."products"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."pricing_rules" ADD CONSTRAINT "pricing_rules_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."pricing_rules" ADD CONSTRAINT "pricing_rules_sales_agent_id_sales_agents_id_fk" FOREIGN KEY ("sales_agent_id") REFERENCES "media_buying"."sales_agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."products" ADD CONSTRAINT "products_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."products" ADD CONSTRAINT "products_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."products" ADD CONSTRAINT "products_sales_agent_id_sales_agents_id_fk" FOREIGN KEY ("sales_agent_id") REFERENCES "media_buying"."sales_agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."sales_agents" ADD CONSTRAINT "sales_agents_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."sales_agents" ADD CONSTRAINT "sales_agents_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."test_cohorts" ADD CONSTRAINT "test_cohorts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."test_cohorts" ADD CONSTRAINT "test_cohorts_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "media_buying"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "activation_provider_connections_idx" ON "media_buying"."activation_provider_connections" USING btree ("registration_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "activation_provider_connections_uq" ON "media_buying"."activation_provider_connections" USING btree ("registration_id","provider","provider_account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "advertiser_accounts_link_uq" ON "media_buying"."advertiser_accounts" USING btree ("advertiser_id","storefront_id");--> statement-breakpoint
CREATE INDEX "advertiser_accounts_org_idx" ON "media_buying"."advertiser_accounts" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "advertiser_accounts_storefront_idx" ON "media_buying"."advertiser_accounts" USING btree ("storefront_id","id");--> statement-breakpoint
CREATE INDEX "campaigns_org_idx" ON "media_buying"."campaigns" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "creatives_org_idx" ON "media_buying"."creatives" USING btree ("organization_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_metrics_package_day_uq" ON "media_buying"."delivery_metrics" USING btree ("package_id","day");--> statement-breakpoint
CREATE INDEX "delivery_metrics_org_idx" ON "media_buying"."delivery_metrics" USING btree ("organization_id","day","id");--> statement-breakpoint
CREATE INDEX "discovery_sessions_org_idx" ON "media_buying"."discovery_sessions" USING btree ("organization_id","expires_at");--> statement-breakpoint
CREATE INDEX "human_feedback_org_idx" ON "media_buying"."human_feedback" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "measurement_records_org_idx" ON "media_buying"."measurement_records" USING btree ("organization_id","kind","id");--> statement-breakpoint
CREATE INDEX "media_buys_org_idx" ON "media_buying"."media_buys" USING btree ("organization_id","id");--> statement-breakpoint
CREATE INDEX "media_buys_campaign_idx" ON "media_buying"."media_buys" USING btree ("campaign_id");--> statement-breakpoint
CREATE INDEX "media_buys_live_idx" ON "media_buying"."media_buys" USING btree ("status","start_time");--> statement-breakpoint
CREATE INDEX "packages_buy_idx" ON "media_buying"."packages" USING btree ("media_buy_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "pricing_rules_agent_uq" ON "media_buying"."pricing_rules" USING btree ("sales_agent_id");--> statement-breakpoint
CREATE INDEX "products_storefront_idx" ON "media_buying"."products" USING btree ("storefront_id","status","id");--> statement-breakpoint
CREATE INDEX "sales_agents_storefront_idx" ON "media_buying"."sales_agents" USING btree ("storefront_id","id");--> statement-breakpoint
CREATE INDEX "test_cohorts_org_idx" ON "media_buying"."test_cohorts" USING btree ("organization_id","id");