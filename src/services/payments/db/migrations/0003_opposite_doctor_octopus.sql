CREATE TABLE "payments"."oauth_signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"alg" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"private_jwk_sealed" text,
	"max_token_ttl_seconds" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "payments"."credentials" ADD COLUMN "client_id" text;--> statement-breakpoint
ALTER TABLE "payments"."credentials" ADD COLUMN "scopes" text[];--> statement-breakpoint
CREATE UNIQUE INDEX "credentials_client_id_idx" ON "payments"."credentials" USING btree ("client_id");--> statement-breakpoint
ALTER TABLE "payments"."credentials" ADD CONSTRAINT "credentials_oauth_client_fields" CHECK (("payments"."credentials"."kind" = 'oauth_client') = ("payments"."credentials"."client_id" is not null and "payments"."credentials"."scopes" is not null));