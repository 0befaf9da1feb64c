ALTER TABLE "odds"."changes" ADD COLUMN "logged_at" timestamp with time zone;--> statement-breakpoint
UPDATE "odds"."changes" SET "logged_at" = "recorded_at";--> statement-breakpoint
ALTER TABLE "odds"."changes" ALTER COLUMN "logged_at" SET NOT NULL;
