// Webhook receiver for `bench/entity-events.ts`, run as its own process so it never shares the service's event
// loop. Answers 200 to every POST and records, per delivery, the event id and the wall-clock arrival time (ms).
// GET /stats returns {count, arrivals: [[event_id, ms], ...]} and clears the list; prints its port on stdout.
import http from 'node:http';

let arrivals = [];
let count = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const body = JSON.stringify({ count, arrivals });
    arrivals = [];
    count = 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    count++;
    if (req.url === '/hook') {
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        arrivals.push([payload.event_id, at]);
      } catch {
        // baseline posts are not events
      }
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
    res.end('{}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
