CREATE SCHEMA IF NOT EXISTS "payments";
--> statement-breakpoint
CREATE TABLE "payments"."card_payments" (
	"id" text PRIMARY KEY NOT NULL,
	"payment_intent_id" text NOT NULL,
	"merchant_party_id" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"brand" text,
	"last4" text,
	"channel" text NOT NULL,
	"voice_session_id" text,
	"failure_code" text,
	"failure_message" text,
	"network_reference" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payments"."credentials" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "payments"."credentials_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"party_id" text NOT NULL,
	"kind" text NOT NULL,
	"key_hash" text NOT NULL,
	"hint" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "credentials_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "payments"."parties" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"owner_party_id" text,
	"program_code" text NOT NULL,
	"program_id" text NOT NULL,
	"program_version_id" text NOT NULL,
	"case_id" text NOT NULL,
	"case_status" text NOT NULL,
	"requirements" jsonb NOT NULL,
	"per_transaction" bigint,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "parties_per_transaction_positive" CHECK ("payments"."parties"."per_transaction" is null or "payments"."parties"."per_transaction" > 0)
);
--> statement-breakpoint
CREATE TABLE "payments"."payment_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_party_id" text NOT NULL,
	"customer_party_id" text NOT NULL,
	"description" text,
	"currency" text NOT NULL,
	"tax_mode" text NOT NULL,
	"amount" bigint NOT NULL,
	"tax_amount" bigint NOT NULL,
	"line_items" jsonb NOT NULL,
	"status" text NOT NULL,
	"client_secret_hash" text NOT NULL,
	"client_secret_sealed" text NOT NULL,
	"failed_attempts" integer DEFAULT 0 NOT NULL,
	"card_payment_id" text,
	"voice_session_id" text,
	"expires_at" timestamp with time zone,
	"canceled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payment_intents_amount_positive" CHECK ("payments"."payment_intents"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "payments"."voice_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"payment_intent_id" text NOT NULL,
	"merchant_party_id" text NOT NULL,
	"status" text NOT NULL,
	"card_payment_id" text,
	"ended_reason" text,
	"ended_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payments"."card_payments" ADD CONSTRAINT "card_payments_payment_intent_id_payment_intents_id_fk" FOREIGN KEY ("payment_intent_id") REFERENCES "payments"."payment_intents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments"."credentials" ADD CONSTRAINT "credentials_party_id_parties_id_fk" FOREIGN KEY ("party_id") REFERENCES "payments"."parties"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments"."payment_intents" ADD CONSTRAINT "payment_intents_merchant_party_id_parties_id_fk" FOREIGN KEY ("merchant_party_id") REFERENCES "payments"."parties"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments"."payment_intents" ADD CONSTRAINT "payment_intents_customer_party_id_parties_id_fk" FOREIGN KEY ("customer_party_id") REFERENCES "payments"."parties"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments"."voice_sessions" ADD CONSTRAINT "voice_sessions_payment_intent_id_payment_intents_id_fk" FOREIGN KEY ("payment_intent_id") REFERENCES "payments"."payment_intents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "card_payments_intent_idx" ON "payments"."card_payments" USING btree ("payment_intent_id");--> statement-breakpoint
CREATE INDEX "credentials_party_idx" ON "payments"."credentials" USING btree ("party_id");--> statement-breakpoint
CREATE INDEX "parties_owner_idx" ON "payments"."parties" USING btree ("owner_party_id");--> statement-breakpoint
CREATE INDEX "payment_intents_merchant_created_idx" ON "payments"."payment_intents" USING btree ("merchant_party_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payment_intents_open_expiry_idx" ON "payments"."payment_intents" USING btree ("expires_at") WHERE "payments"."payment_intents"."status" = 'open';--> statement-breakpoint
CREATE INDEX "voice_sessions_intent_idx" ON "payments"."voice_sessions" USING btree ("payment_intent_id");