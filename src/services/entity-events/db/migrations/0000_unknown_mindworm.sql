CREATE SCHEMA IF NOT EXISTS "entity_events";
--> statement-breakpoint
CREATE TABLE "entity_events"."api_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "entity_events"."api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tenant_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "entity_events"."deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"event_id" text NOT NULL,
	"enrollment_id" text NOT NULL,
	"webhook_id" text NOT NULL,
	"status" text NOT NULL,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"claimed_at" timestamp with time zone,
	"last_status_code" integer,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "entity_events"."delivery_attempts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "entity_events"."delivery_attempts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"delivery_id" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"attempted_at" timestamp with time zone NOT NULL,
	"status_code" integer,
	"duration_ms" integer NOT NULL,
	"error" text,
	"next_attempt_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "entity_events"."enrollment_entities" (
	"enrollment_id" text NOT NULL,
	"entity_id" text NOT NULL,
	CONSTRAINT "enrollment_entities_enrollment_id_entity_id_pk" PRIMARY KEY("enrollment_id","entity_id")
);
--> statement-breakpoint
CREATE TABLE "entity_events"."enrollments" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"entity_type" text NOT NULL,
	"api_version" text NOT NULL,
	"enrollment_key" text NOT NULL,
	"webhook_id" text,
	"status" text NOT NULL,
	"event_types" text[] NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_modified_time" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entity_events"."events" (
	"id" text PRIMARY KEY NOT NULL,
	"entity_type" text NOT NULL,
	"entity_id" text NOT NULL,
	"event_name" text NOT NULL,
	"event_time" timestamp with time zone NOT NULL,
	"data" jsonb NOT NULL,
	"source" text NOT NULL,
	"stored_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entity_events"."partners" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entity_events"."settings" (
	"name" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entity_events"."tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"partner_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "entity_events"."webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text,
	"partner_id" text NOT NULL,
	"legacy" boolean DEFAULT false NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"webhook_url" text NOT NULL,
	"headers" text[] DEFAULT '{}'::text[] NOT NULL,
	"payload_format" text NOT NULL,
	"status" text NOT NULL,
	"disabled_reason" text,
	"secret_sealed" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_modified_time" timestamp with time zone NOT NULL,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "entity_events"."api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "entity_events"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."deliveries" ADD CONSTRAINT "deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "entity_events"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "entity_events"."deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."enrollment_entities" ADD CONSTRAINT "enrollment_entities_enrollment_id_enrollments_id_fk" FOREIGN KEY ("enrollment_id") REFERENCES "entity_events"."enrollments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."enrollments" ADD CONSTRAINT "enrollments_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "entity_events"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."tenants" ADD CONSTRAINT "tenants_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "entity_events"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."webhooks" ADD CONSTRAINT "webhooks_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "entity_events"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "entity_events"."webhooks" ADD CONSTRAINT "webhooks_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "entity_events"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "entity_events"."api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_event_enrollment_uq" ON "entity_events"."deliveries" USING btree ("event_id","enrollment_id");--> statement-breakpoint
CREATE INDEX "deliveries_webhook_idx" ON "entity_events"."deliveries" USING btree ("webhook_id","created_at");--> statement-breakpoint
CREATE INDEX "deliveries_due_idx" ON "entity_events"."deliveries" USING btree ("next_attempt_at") WHERE "entity_events"."deliveries"."status" in ('pending', 'in_flight');--> statement-breakpoint
CREATE INDEX "delivery_attempts_delivery_idx" ON "entity_events"."delivery_attempts" USING btree ("delivery_id","attempt_number");--> statement-breakpoint
CREATE INDEX "enrollment_entities_entity_idx" ON "entity_events"."enrollment_entities" USING btree ("entity_id");--> statement-breakpoint
CREATE INDEX "enrollments_tenant_idx" ON "entity_events"."enrollments" USING btree ("tenant_id","entity_type","created_at");--> statement-breakpoint
CREATE INDEX "enrollments_webhook_idx" ON "entity_events"."enrollments" USING btree ("webhook_id");--> statement-breakpoint
CREATE INDEX "events_entity_idx" ON "entity_events"."events" USING btree ("entity_type","entity_id","event_time");--> statement-breakpoint
CREATE UNIQUE INDEX "webhooks_tenant_name_uq" ON "entity_events"."webhooks" USING btree ("tenant_id","name") WHERE "entity_events"."webhooks"."legacy" = false and "entity_events"."webhooks"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "webhooks_partner_legacy_uq" ON "entity_events"."webhooks" USING btree ("partner_id") WHERE "entity_events"."webhooks"."legacy" = true and "entity_events"."webhooks"."deleted_at" is null;