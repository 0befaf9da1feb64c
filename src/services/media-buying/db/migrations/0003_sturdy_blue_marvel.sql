CREATE TABLE "media_buying"."phone_line_switches" (
	"organization_id" bigint PRIMARY KEY NOT NULL,
	"enabled" boolean NOT NULL,
	"changed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."text_consents" (
	"line_id" bigint NOT NULL,
	"number_hash" text NOT NULL,
	"status" text NOT NULL,
	"changed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "text_consents_line_id_number_hash_pk" PRIMARY KEY("line_id","number_hash")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."text_conversation_arrivals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."text_conversation_arrivals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"conversation_id" bigint NOT NULL,
	"arrived_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."text_conversations" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."text_conversations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"organization_id" bigint NOT NULL,
	"line_id" bigint NOT NULL,
	"number_hash" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."text_inbound" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."text_inbound_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"line_id" bigint NOT NULL,
	"carrier_message_id" text NOT NULL,
	"arrived_at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"outcome" text,
	"from_hash" text,
	"from_sealed" text,
	"text_sealed" text,
	"handled_at" timestamp with time zone,
	"words_deleted_at" timestamp with time zone,
	CONSTRAINT "text_inbound_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."text_lines" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."text_lines_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"number" text NOT NULL,
	"storefront_id" bigint,
	"status" text NOT NULL,
	"assigned_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone,
	CONSTRAINT "text_lines_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."text_outbox" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."text_outbox_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"organization_id" bigint NOT NULL,
	"line_id" bigint NOT NULL,
	"origin" text NOT NULL,
	"channel" text NOT NULL,
	"request_id" uuid,
	"fingerprint" text NOT NULL,
	"destination_hash" text,
	"destination_sealed" text,
	"text_sealed" text,
	"segments" integer NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"inbound_id" bigint,
	"created_at" timestamp with time zone NOT NULL,
	"sent_at" timestamp with time zone,
	"carrier_message_id" text,
	"delivery_status" text,
	CONSTRAINT "text_outbox_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
ALTER TABLE "media_buying"."phone_line_switches" ADD CONSTRAINT "phone_line_switches_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_consents" ADD CONSTRAINT "text_consents_line_id_text_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "media_buying"."text_lines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_conversation_arrivals" ADD CONSTRAINT "text_conversation_arrivals_conversation_id_text_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "media_buying"."text_conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_conversations" ADD CONSTRAINT "text_conversations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_conversations" ADD CONSTRAINT "text_conversations_line_id_text_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "media_buying"."text_lines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_inbound" ADD CONSTRAINT "text_inbound_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_inbound" ADD CONSTRAINT "text_inbound_line_id_text_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "media_buying"."text_lines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_lines" ADD CONSTRAINT "text_lines_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_lines" ADD CONSTRAINT "text_lines_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_outbox" ADD CONSTRAINT "text_outbox_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "media_buying"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."text_outbox" ADD CONSTRAINT "text_outbox_line_id_text_lines_id_fk" FOREIGN KEY ("line_id") REFERENCES "media_buying"."text_lines"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "text_conversation_arrivals_idx" ON "media_buying"."text_conversation_arrivals" USING btree ("conversation_id","arrived_at");--> statement-breakpoint
CREATE UNIQUE INDEX "text_conversations_uq" ON "media_buying"."text_conversations" USING btree ("organization_id","line_id","number_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "text_inbound_carrier_uq" ON "media_buying"."text_inbound" USING btree ("line_id","carrier_message_id");--> statement-breakpoint
CREATE INDEX "text_inbound_retention_idx" ON "media_buying"."text_inbound" USING btree ("arrived_at") WHERE "media_buying"."text_inbound"."words_deleted_at" is null;--> statement-breakpoint
CREATE INDEX "text_inbound_line_status_idx" ON "media_buying"."text_inbound" USING btree ("line_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "text_lines_active_number_uq" ON "media_buying"."text_lines" USING btree ("number") WHERE "media_buying"."text_lines"."status" = 'active';--> statement-breakpoint
CREATE INDEX "text_lines_org_idx" ON "media_buying"."text_lines" USING btree ("organization_id");--> statement-breakpoint
CREATE UNIQUE INDEX "text_outbox_request_uq" ON "media_buying"."text_outbox" USING btree ("organization_id","request_id") WHERE "media_buying"."text_outbox"."request_id" is not null;--> statement-breakpoint
CREATE INDEX "text_outbox_line_sent_idx" ON "media_buying"."text_outbox" USING btree ("line_id","sent_at");--> statement-breakpoint
CREATE INDEX "text_outbox_line_dest_idx" ON "media_buying"."text_outbox" USING btree ("line_id","destination_hash","status");--> statement-breakpoint
CREATE UNIQUE INDEX "text_outbox_carrier_uq" ON "media_buying"."text_outbox" USING btree ("carrier_message_id");