ALTER TABLE "agent_gateway"."automations" ALTER COLUMN "input" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_gateway"."executions" ALTER COLUMN "input" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_gateway"."runs" ALTER COLUMN "input" DROP NOT NULL;