ALTER TABLE "agent_gateway"."runs" ADD COLUMN "invocation_id" text;--> statement-breakpoint
ALTER TABLE "agent_gateway"."runs" ADD COLUMN "invocation_conversation_id" text;