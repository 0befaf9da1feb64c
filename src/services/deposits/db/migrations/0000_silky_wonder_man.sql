CREATE SCHEMA IF NOT EXISTS "deposits";
--> statement-breakpoint
CREATE TABLE "deposits"."api_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "deposits"."api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"versions" text[] NOT NULL,
	"rate_limit_per_minute" integer,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "deposits"."quotes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "deposits"."quotes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"vault_address" text NOT NULL,
	"source_chain_id" integer NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"recipient" text NOT NULL,
	"depositor" text NOT NULL,
	"refund_recipient" text NOT NULL,
	"fingerprint" text NOT NULL,
	"nonce" text NOT NULL,
	"salt" text NOT NULL,
	"deadline" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"received_amount" numeric(78, 0) DEFAULT '0' NOT NULL,
	"funded_at" timestamp with time zone,
	"published_at" timestamp with time zone,
	"publish_tx_hash" text,
	"failure_reason" text,
	"api_key_id" bigint,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "quotes_vault_address_unique" UNIQUE("vault_address"),
	CONSTRAINT "quotes_amount_positive" CHECK ("deposits"."quotes"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "deposits"."simulator_settings" (
	"name" text PRIMARY KEY NOT NULL,
	"enabled" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposits"."transfers" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "deposits"."transfers_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"quote_id" bigint NOT NULL,
	"direction" text NOT NULL,
	"kind" text NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"tx_hash" text NOT NULL,
	"observed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "transfers_tx_hash_unique" UNIQUE("tx_hash")
);
--> statement-breakpoint
ALTER TABLE "deposits"."transfers" ADD CONSTRAINT "transfers_quote_id_quotes_id_fk" FOREIGN KEY ("quote_id") REFERENCES "deposits"."quotes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "quotes_pending_fingerprint_uq" ON "deposits"."quotes" USING btree ("fingerprint") WHERE "deposits"."quotes"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "quotes_pending_deadline_idx" ON "deposits"."quotes" USING btree ("deadline") WHERE "deposits"."quotes"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "transfers_quote_idx" ON "deposits"."transfers" USING btree ("quote_id");