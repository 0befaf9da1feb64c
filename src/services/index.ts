import type { ServiceDefinition } from '../platform/service.ts';
import { agentGatewayService } from './agent-gateway/index.ts';
import { coinsService } from './coins/index.ts';
import { depositsService } from './deposits/index.ts';
import { entityEventsService } from './entity-events/index.ts';
import { mediaBuyingService } from './media-buying/index.ts';
import { oddsService } from './odds/index.ts';
import { paymentsService } from './payments/index.ts';
import { pricingService } from './pricing/index.ts';

/**
 * Every implemented service, in start order. A planned service is added here when it lands; until then
 * `SERVICES` cannot name it.
 */
export const implementedServices: readonly ServiceDefinition[] = [
  mediaBuyingService,
  paymentsService,
  pricingService,
  depositsService,
  coinsService,
  agentGatewayService,
  oddsService,
  entityEventsService,
];
