DROP INDEX "entity_events"."deliveries_event_enrollment_uq";--> statement-breakpoint
ALTER TABLE "entity_events"."delivery_attempts" ALTER COLUMN "duration_ms" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "entity_events"."deliveries" ADD COLUMN "replay_of" text;--> statement-breakpoint
ALTER TABLE "entity_events"."delivery_attempts" ADD COLUMN "status" text DEFAULT 'in_progress' NOT NULL;--> statement-breakpoint
ALTER TABLE "entity_events"."webhooks" ADD COLUMN "disabled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "entity_events"."webhooks" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "entity_events"."deliveries" ADD CONSTRAINT "deliveries_replay_of_deliveries_id_fk" FOREIGN KEY ("replay_of") REFERENCES "entity_events"."deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_replay_of_uq" ON "entity_events"."deliveries" USING btree ("replay_of") WHERE "entity_events"."deliveries"."replay_of" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_event_enrollment_uq" ON "entity_events"."deliveries" USING btree ("event_id","enrollment_id") WHERE "entity_events"."deliveries"."replay_of" is null;--> statement-breakpoint
-- Written by hand after the generated statements: attempts logged before this migration all have an outcome, and a
-- webhook disabled before it was disabled at its last modification at the latest.
UPDATE "entity_events"."delivery_attempts" SET "status" = CASE WHEN "status_code" BETWEEN 200 AND 299 THEN 'succeeded' ELSE 'failed' END;--> statement-breakpoint
UPDATE "entity_events"."webhooks" SET "disabled_at" = "last_modified_time" WHERE "status" = 'disabled';
