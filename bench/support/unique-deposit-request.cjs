// autocannon setupRequest (runs in the load worker): every request gets a distinct amount, hence a new quote.
const { randomInt } = require('node:crypto');
let n = 0;
const base = randomInt(1, 1e9) * 1e6;
module.exports = (request) => {
  n += 1;
  const body = JSON.parse(request.body);
  body.amount = String(base + n);
  request.body = JSON.stringify(body);
  return request;
};
