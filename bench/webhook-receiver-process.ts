/**
 * A partner's receiver on loopback, as light as one can be, in a process of its own (forked by
 * WebhookReceiver): it reads each delivery and answers 204 at once, counting what it received. Its
 * own process keeps the load generator's event loop to itself, as the feed's readers do, so that what
 * the bench measures is the service's side. It sends its port once listening; asked `count`, it
 * answers with the deliveries received so far; asked `stop`, it exits.
 */
import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';

let received = 0;
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received++;
    response.writeHead(204).end();
  });
});

server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));

process.on('message', (message) => {
  if (message === 'count') process.send!(received);
  else if (message === 'stop') process.exit(0);
});
