DROP INDEX "media_buying"."creatives_buyer_id_uq";--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD COLUMN "storefront_id" bigint;--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD CONSTRAINT "creatives_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "creatives_buyer_id_uq" ON "media_buying"."creatives" USING btree ("advertiser_id","storefront_id","buyer_creative_id");