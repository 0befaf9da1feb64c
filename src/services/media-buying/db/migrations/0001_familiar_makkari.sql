ALTER TABLE "media_buying"."advertiser_previews" ADD COLUMN "client_address" text;--> statement-breakpoint
ALTER TABLE "media_buying"."invitations" ADD COLUMN "invitee_name" text;--> statement-breakpoint
CREATE INDEX "advertiser_previews_email_idx" ON "media_buying"."advertiser_previews" USING btree ("work_email","created_at");--> statement-breakpoint
CREATE INDEX "advertiser_previews_address_idx" ON "media_buying"."advertiser_previews" USING btree ("client_address","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "commercial_offers_pending_uq" ON "media_buying"."commercial_offers" USING btree ("organization_id") WHERE "media_buying"."commercial_offers"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "invitations_email_idx" ON "media_buying"."invitations" USING btree ("email");