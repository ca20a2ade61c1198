// A receiver of the service's webhooks, runnable as it stands from a clone of the project:
//
//   WEBHOOK_SECRET=whsec_… node docs/examples/receive-webhooks.mjs 8080
//
// It listens on the port of its argument (or PORT) and takes each POST as a delivery: it verifies the
// Standard Webhooks signature with the `standardwebhooks` package (the signature of "id.timestamp.body"
// under the subscription's secret, a timestamp within 5 minutes of its clock), refuses a delivery that
// fails with 401, answers a delivery it received before (the same webhook-id) 204 without handling it
// again, and answers any other 204 at once, before handling it (here: printing its body on stdout, one
// line a delivery). What it says about itself goes to stderr. docs/webhooks.md explains each choice;
// receive_webhooks.py and ReceiveWebhooks.cs beside it do the same in Python and C#.
//
//   WEBHOOK_SECRET  the secret CreateWebhook (or RotateWebhookSecret) answered, whsec_…
import { createServer } from 'node:http';
import { setImmediate } from 'node:timers';
import { Webhook } from 'standardwebhooks';

/** More than any event the service sends; a larger body is refused unread. */
const MAX_BODY_BYTES = 1024 * 1024;

const port = Number(process.argv[2] ?? process.env.PORT);
const secret = process.env.WEBHOOK_SECRET;

if (!Number.isInteger(port) || !secret) {
  console.error('Usage: WEBHOOK_SECRET=whsec_… node docs/examples/receive-webhooks.mjs <port>');
  process.exit(2);
}

/** @param {string} message */
const log = (message) => console.error(`[receive-webhooks] ${message}`);
/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

const webhook = new Webhook(secret);

/**
 * The webhook-ids of the deliveries received. A real receiver keeps them in its own database, written
 * in the transaction that stores the delivery for its work, and keeps them for days.
 */
const received = new Set();

/**
 * The work a delivery asks for, done after its answer: the service waits for the answer (10 s at
 * most), so a receiver stores the delivery, answers, and works from what it stored.
 *
 * @param {string} body
 */
const handle = (body) => process.stdout.write(`${body}\n`);

/**
 * @param {import('node:http').ServerResponse} response
 * @param {number} status
 */
const answer = (response, status) => response.writeHead(status).end();

const server = createServer((request, response) => {
  if (request.method !== 'POST') return answer(response, 405);
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    answer(response, 413);
    return request.destroy();
  }
  /** @type {Buffer[]} */
  const chunks = [];
  let length = 0;
  request.on('data', (/** @type {Buffer} */ chunk) => {
    length += chunk.length;
    if (length > MAX_BODY_BYTES) {
      answer(response, 413);
      request.destroy();
    } else chunks.push(chunk);
  });
  request.on('end', () => {
    // The signature covers the body's bytes exactly as sent: verify them before parsing anything.
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(request.headers['webhook-id'] ?? '');
    try {
      webhook.verify(body, {
        'webhook-id': id,
        'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
      });
    } catch (error) {
      log(`Refused delivery ${id}: ${messageOf(error)}`);
      return answer(response, 401);
    }
    if (received.has(id)) {
      log(`Skipped delivery ${id}: already received`);
      return answer(response, 204);
    }
    received.add(id);
    answer(response, 204);
    setImmediate(() => handle(body));
  });
});

server.listen(port, () => log(`Listening on port ${port}`));

const stop = () => server.close(() => log('Stopped.'));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
