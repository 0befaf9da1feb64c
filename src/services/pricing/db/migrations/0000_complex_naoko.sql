CREATE SCHEMA IF NOT EXISTS "pricing";
--> statement-breakpoint
CREATE TABLE "pricing"."api_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "pricing"."api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"project_id" bigint NOT NULL,
	"permission" text NOT NULL,
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"rate_limit_per_minute" integer,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "api_keys_permission_check" CHECK ("pricing"."api_keys"."permission" in ('read', 'read_write'))
);
--> statement-breakpoint
CREATE TABLE "pricing"."features" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "pricing"."features_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"project_id" bigint NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"base_price" numeric(14, 4) NOT NULL,
	"feature_type" text NOT NULL,
	"is_countable" boolean NOT NULL,
	"countable_data" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "features_id_project_uq" UNIQUE("id","project_id"),
	CONSTRAINT "features_type_check" CHECK ("pricing"."features"."feature_type" in ('Standart', 'Limits', 'Usage Based')),
	CONSTRAINT "features_base_price_check" CHECK ("pricing"."features"."base_price" >= 0),
	CONSTRAINT "features_countable_check" CHECK ("pricing"."features"."is_countable" = ("pricing"."features"."countable_data" is not null))
);
--> statement-breakpoint
CREATE TABLE "pricing"."plan_features" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "pricing"."plan_features_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"project_id" bigint NOT NULL,
	"plan_id" bigint NOT NULL,
	"feature_id" bigint NOT NULL,
	"multiplier" numeric(12, 4) NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "plan_features_plan_feature_uq" UNIQUE("plan_id","feature_id"),
	CONSTRAINT "plan_features_multiplier_check" CHECK ("pricing"."plan_features"."multiplier" > 0)
);
--> statement-breakpoint
CREATE TABLE "pricing"."plans" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "pricing"."plans_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"project_id" bigint NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"base_price" numeric(14, 4) NOT NULL,
	"is_popular" boolean DEFAULT false NOT NULL,
	"is_visible" boolean DEFAULT true NOT NULL,
	"is_free" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "plans_id_project_uq" UNIQUE("id","project_id"),
	CONSTRAINT "plans_base_price_check" CHECK ("pricing"."plans"."base_price" >= 0),
	CONSTRAINT "plans_free_price_check" CHECK (not "pricing"."plans"."is_free" or "pricing"."plans"."base_price" = 0)
);
--> statement-breakpoint
CREATE TABLE "pricing"."projects" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "pricing"."projects_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "projects_slug_unique" UNIQUE("slug"),
	CONSTRAINT "projects_slug_check" CHECK ("pricing"."projects"."slug" ~ '^[a-z0-9]+(-[a-z0-9]+)*$')
);
--> statement-breakpoint
ALTER TABLE "pricing"."api_keys" ADD CONSTRAINT "api_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "pricing"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pricing"."features" ADD CONSTRAINT "features_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "pricing"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pricing"."plan_features" ADD CONSTRAINT "plan_features_plan_fk" FOREIGN KEY ("plan_id","project_id") REFERENCES "pricing"."plans"("id","project_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pricing"."plan_features" ADD CONSTRAINT "plan_features_feature_fk" FOREIGN KEY ("feature_id","project_id") REFERENCES "pricing"."features"("id","project_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pricing"."plans" ADD CONSTRAINT "plans_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "pricing"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_project_idx" ON "pricing"."api_keys" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "features_project_idx" ON "pricing"."features" USING btree ("project_id","id");--> statement-breakpoint
CREATE INDEX "plan_features_feature_idx" ON "pricing"."plan_features" USING btree ("feature_id");--> statement-breakpoint
CREATE INDEX "plans_project_idx" ON "pricing"."plans" USING btree ("project_id","id");