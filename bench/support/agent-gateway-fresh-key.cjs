// autocannon setupRequest (runs in the load worker): every job submission carries a fresh Idempotency-Key, so each
// is new work (accepted, recorded, queued).
let n = 0;
const run = `${process.pid}-${Date.now()}`;
module.exports = (request) => {
  n += 1;
  request.headers = { ...request.headers, 'idempotency-key': `bench-${run}-${n}` };
  return request;
};
