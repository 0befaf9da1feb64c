CREATE TABLE "media_buying"."discovery_quotes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "media_buying"."discovery_quotes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"public_id" text NOT NULL,
	"session_id" bigint NOT NULL,
	"group_index" integer NOT NULL,
	"position" integer NOT NULL,
	"product_id" bigint NOT NULL,
	"product" jsonb NOT NULL,
	"storefront" jsonb NOT NULL,
	"options" jsonb NOT NULL,
	CONSTRAINT "discovery_quotes_public_id_unique" UNIQUE("public_id")
);
--> statement-breakpoint
ALTER TABLE "media_buying"."discovery_quotes" ADD CONSTRAINT "discovery_quotes_session_id_discovery_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "media_buying"."discovery_sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."discovery_quotes" ADD CONSTRAINT "discovery_quotes_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "media_buying"."products"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "discovery_quotes_page_idx" ON "media_buying"."discovery_quotes" USING btree ("session_id","group_index","position");--> statement-breakpoint
CREATE INDEX "discovery_sessions_expires_idx" ON "media_buying"."discovery_sessions" USING btree ("expires_at");