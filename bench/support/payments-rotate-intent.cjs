// autocannon setupRequest (runs in the load worker): each read goes to the next of the intents created before the
// run (ids in PAYMENTS_BENCH_INTENT_IDS, comma-separated).
const ids = (process.env.PAYMENTS_BENCH_INTENT_IDS || '').split(',').filter(Boolean);
let n = 0;
module.exports = (request) => {
  n += 1;
  request.path = `/v1/payment-intents/${ids[n % ids.length]}`;
  return request;
};
