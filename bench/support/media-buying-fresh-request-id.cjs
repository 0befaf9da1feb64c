// autocannon setupRequest (runs in the load worker): every text command gets a fresh requestId (a new text).
const { randomUUID } = require('node:crypto');
module.exports = (request) => {
  const body = JSON.parse(request.body);
  body.requestId = randomUUID();
  request.body = JSON.stringify(body);
  return request;
};
