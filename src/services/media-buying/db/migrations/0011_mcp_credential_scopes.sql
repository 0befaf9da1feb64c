-- OAuth scopes of MCP connectors: adcp:read and adcp:write replace the one scope per kind of endpoint (adcp:buyer,
-- adcp:storefront, adcp:creative, adcp:admin), and every access and refresh credential carries its own scope. A grant
-- of the old names had every tool of its endpoint: buyer and storefront endpoints map to adcp:read adcp:write, the
-- creative and admin endpoints (no mutating tool) to adcp:read.
UPDATE "media_buying"."mcp_grants" SET "scope" = CASE WHEN "scope" IN ('adcp:buyer', 'adcp:storefront') THEN 'adcp:read adcp:write' ELSE 'adcp:read' END WHERE "scope" NOT IN ('adcp:read', 'adcp:read adcp:write');--> statement-breakpoint
UPDATE "media_buying"."oauth_authorization_codes" SET "scope" = CASE WHEN "scope" IN ('adcp:buyer', 'adcp:storefront') THEN 'adcp:read adcp:write' ELSE 'adcp:read' END WHERE "scope" NOT IN ('adcp:read', 'adcp:read adcp:write');--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_access_tokens" ADD COLUMN "scope" text;--> statement-breakpoint
UPDATE "media_buying"."mcp_access_tokens" t SET "scope" = g."scope" FROM "media_buying"."mcp_grants" g WHERE g."id" = t."grant_id";--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_access_tokens" ALTER COLUMN "scope" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ADD COLUMN "scope" text;--> statement-breakpoint
UPDATE "media_buying"."mcp_refresh_tokens" t SET "scope" = g."scope" FROM "media_buying"."mcp_grants" g WHERE g."id" = t."grant_id";--> statement-breakpoint
ALTER TABLE "media_buying"."mcp_refresh_tokens" ALTER COLUMN "scope" SET NOT NULL;
