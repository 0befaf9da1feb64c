CREATE TABLE "coins"."seed_updates" (
	"name" text PRIMARY KEY NOT NULL,
	"digest" text NOT NULL,
	"applied_at" timestamp with time zone NOT NULL
);
