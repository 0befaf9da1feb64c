CREATE TABLE "media_buying"."catalog_versions" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL,
	"fingerprint" text,
	"bumped_by" bigint,
	CONSTRAINT "catalog_versions_one_row" CHECK ("media_buying"."catalog_versions"."id" = 1)
);
--> statement-breakpoint
CREATE INDEX "discovery_sessions_kept_idx" ON "media_buying"."discovery_sessions" USING btree ("advertiser_id","quote_day");--> statement-breakpoint
INSERT INTO "media_buying"."catalog_versions" ("id", "version") VALUES (1, 0) ON CONFLICT ("id") DO NOTHING;
--> statement-breakpoint
-- The catalog version (db/catalog.ts, catalogVersions): bumped once per transaction that writes the catalog or the
-- ad-platform simulator's faults, at its commit (deferred), so the bump is atomic with the write and takes the row's
-- lock last (no lock-order cycles with the rows the transaction wrote). Later rows of the same transaction find
-- bumped_by = their transaction and do not bump again. A catalog write also clears the fingerprint (the catalog's
-- content changed), even after a fault write of the same transaction bumped the version; a fault write keeps it.
CREATE FUNCTION "media_buying"."bump_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "media_buying"."catalog_versions" AS v ("id", "version", "fingerprint", "bumped_by")
    VALUES (1, 1, NULL, txid_current())
    ON CONFLICT ("id") DO UPDATE SET
      "version" = CASE WHEN v."bumped_by" = txid_current() THEN v."version" ELSE v."version" + 1 END,
      "fingerprint" = CASE WHEN TG_TABLE_NAME = 'ad_platform_faults' THEN v."fingerprint" END,
      "bumped_by" = txid_current()
    WHERE v."bumped_by" IS DISTINCT FROM txid_current()
      OR (TG_TABLE_NAME <> 'ad_platform_faults' AND v."fingerprint" IS NOT NULL);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "products_catalog_version" AFTER INSERT OR UPDATE OR DELETE ON "media_buying"."products"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "media_buying"."bump_catalog_version"();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "storefronts_catalog_version" AFTER INSERT OR UPDATE OR DELETE ON "media_buying"."storefronts"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "media_buying"."bump_catalog_version"();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "organizations_catalog_version" AFTER UPDATE OF "public_id" ON "media_buying"."organizations"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "media_buying"."bump_catalog_version"();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "ad_platform_faults_catalog_version" AFTER INSERT OR UPDATE OR DELETE ON "media_buying"."ad_platform_faults"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "media_buying"."bump_catalog_version"();
