// autocannon setupRequest (runs in the load worker): each turn goes to the next of the chats created before the run
// (ids in AGENT_GATEWAY_BENCH_CHAT_IDS, comma-separated), so turns of one chat do not queue on its row.
const ids = (process.env.AGENT_GATEWAY_BENCH_CHAT_IDS || '').split(',').filter(Boolean);
let n = 0;
module.exports = (request) => {
  n += 1;
  request.path = `/api/v1/chats/${ids[n % ids.length]}/turns`;
  return request;
};
