CREATE TABLE "media_buying"."ad_platform_faults" (
	"scope_kind" text NOT NULL,
	"scope_id" bigint NOT NULL,
	"faults" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "ad_platform_faults_scope_kind_scope_id_pk" PRIMARY KEY("scope_kind","scope_id")
);
--> statement-breakpoint
CREATE TABLE "media_buying"."media_buy_dispatches" (
	"media_buy_id" bigint PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"platform_ref" text,
	"forward_error" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media_buying"."storefront_buying_settings" (
	"storefront_id" bigint PRIMARY KEY NOT NULL,
	"approval_required" boolean DEFAULT false NOT NULL,
	"managed" boolean DEFAULT false NOT NULL,
	"supported_targeting" jsonb,
	"destination_profile" jsonb,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "media_buying"."advertiser_accounts" ADD COLUMN "balance_due_minor" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD COLUMN "buyer_creative_id" text;--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD COLUMN "storefront_id" bigint;--> statement-breakpoint
ALTER TABLE "media_buying"."media_buy_dispatches" ADD CONSTRAINT "media_buy_dispatches_media_buy_id_media_buys_id_fk" FOREIGN KEY ("media_buy_id") REFERENCES "media_buying"."media_buys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."storefront_buying_settings" ADD CONSTRAINT "storefront_buying_settings_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media_buying"."creatives" ADD CONSTRAINT "creatives_storefront_id_storefronts_id_fk" FOREIGN KEY ("storefront_id") REFERENCES "media_buying"."storefronts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "creatives_buyer_id_uq" ON "media_buying"."creatives" USING btree ("advertiser_id","storefront_id","buyer_creative_id");