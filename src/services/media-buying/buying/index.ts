/**
 * Part 3's buying layer: ad platforms behind adapters (the simulator and its faults), media buys and creatives sent
 * through them, and the AdCP-shaped refusals they raise. Other folders import this module only through this file.
 */
export { type AdPlatformAdapter, SimulatedAdPlatform as SimulatedBuyingPlatform } from './adapter.ts';
export { CreativeDesk } from './creatives.ts';
export { asRefusal, BuyingRefusal, refused } from './errors.ts';
export { MediaBuyDesk, type NewMediaBuy } from './media-buys.ts';
