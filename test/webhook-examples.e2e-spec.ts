import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import {
  compileCSharpExample,
  EXAMPLES_DIRECTORY,
  type ExampleCommand,
  ExampleProcess,
} from './support/example-process';
import { freePort, REPO_ROOT, TemporaryDirectories } from './support/processes';

/**
 * The webhook receivers of docs/webhooks.md, in Node.js, in Python 3 (its standard library alone) and
 * in C# on Mono, each run as its readers run it and sent deliveries signed by the `standardwebhooks`
 * package, Standard Webhooks' own implementation of the signature the service sends: each answers 2xx
 * exactly the deliveries the package's own `verify` accepts and 401 the others (a tampered body, a
 * wrong secret, a stale or future timestamp, no valid v1 signature), takes the second of two
 * signatures as a rotation sends them, and handles a delivery sent twice (the same webhook-id) once.
 * The webhook feature itself is not needed: the signature is the contract. The C# example needs Mono
 * (Debian's mono-complete), the Python one python3: a run without them fails.
 */

/** A secret as CreateWebhook answers one: `whsec_` and the base64 of 24 random bytes. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const SECRET = newSecret();
/** Another subscription's secret, or the one before a rotation. */
const OTHER_SECRET = newSecret();

/** An AgentsChanged as the service delivers it: the CloudEvent on one line, with a name in UTF-8. */
const agentsChanged = (id: string, brokername: string) =>
  JSON.stringify({
    specversion: '1.0',
    id,
    source: 'urn:property-sales-service',
    type: 'property-sales.transaction.agents-changed',
    subject: '1',
    time: '2026-11-26T17:19:04.454+00:00',
    datacontenttype: 'application/json',
    dataschema: 'https://sales.example.com/asyncapi-json#/components/schemas/AgentsChanged',
    data: {
      transaction_id: 1,
      stamp: '2026-11-26T17:19:04.454+00:00',
      changed_by: 'crm-sync',
      row_version: 4,
      etag: '"1.4"',
      changes: [{ field: 'brokername', before: 'Ramon Dela Cruz', after: brokername }],
      brokername,
    },
  });

interface Delivery {
  readonly what: string;
  readonly headers: Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>;
  readonly body: string;
  /** The contract: whether a receiver holding SECRET takes it. */
  readonly accepted: boolean;
}

/** A delivery of `body`, signed as the service signs it: `v1,<signature>` under each secret. */
function signed(
  what: string,
  accepted: boolean,
  {
    id = randomUUID(),
    timestamp = new Date(),
    body = agentsChanged(id, 'Peñaflor Niño'),
    secrets = [SECRET],
    sentBody = body,
    signatureHeader = (signatures) => signatures.join(' '),
  }: {
    id?: string;
    timestamp?: Date;
    body?: string;
    secrets?: readonly string[];
    /** The body sent, when it is not the one signed. */
    sentBody?: string;
    /** The webhook-signature header sent, from the signatures. */
    signatureHeader?: (signatures: string[]) => string;
  } = {},
): Delivery {
  return {
    what,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signatureHeader(
        secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)),
      ),
    },
    body: sentBody,
    accepted,
  };
}

const first = signed('a delivery signed with the secret', true);
const DELIVERIES: readonly Delivery[] = [
  first,
  signed('its body changed after signing', false, {
    body: agentsChanged('a0b9c2d4-0000-4000-8000-000000000001', 'Peñaflor Niño'),
    sentBody: agentsChanged('a0b9c2d4-0000-4000-8000-000000000001', 'Peñaflor Nino'),
  }),
  signed('signed with another secret', false, { secrets: [OTHER_SECRET] }),
  signed('signed 6 minutes ago', false, { timestamp: new Date(Date.now() - 6 * 60_000) }),
  signed('signed 6 minutes ahead', false, { timestamp: new Date(Date.now() + 6 * 60_000) }),
  signed('signed 4 minutes ago', true, { timestamp: new Date(Date.now() - 4 * 60_000) }),
  signed('two signatures, the second with the secret (a rotation)', true, {
    secrets: [OTHER_SECRET, SECRET],
  }),
  signed('two signatures, neither with the secret', false, {
    secrets: [OTHER_SECRET, newSecret()],
  }),
  signed('the right signature under another version (v2,…)', false, {
    signatureHeader: ([signature]) => signature.replace(/^v1,/, 'v2,'),
  }),
  signed('no signature', false, { signatureHeader: () => '' }),
  { ...first, what: 'the first delivery again (a retry: the same webhook-id)' },
];

/** Whether the package's own verify takes the delivery. */
const packageAccepts = ({ headers, body }: Delivery) => {
  try {
    new Webhook(SECRET).verify(body, headers);
    return true;
  } catch {
    return false;
  }
};

/**
 * The delivery docs/webhooks.md shows, with the example secret its CreateWebhook answer holds: the
 * headers of its `http` block and the one-line JSON of the object its `json` block lays out.
 */
function deliveryOfTheDocs() {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'webhooks.md'), 'utf8');
  const section = page.slice(page.indexOf('### What a delivery looks like'));
  const [, headers, object] = /```http\n([\s\S]*?)```\s*```json\n([\s\S]*?)```/.exec(section) ?? [];
  const header = (name: string) => new RegExp(`^${name}: (.+)$`, 'm').exec(headers ?? '')?.[1];
  return {
    secret: /"secret": "(whsec_[^"]+)"/.exec(page)?.[1] ?? '',
    id: header('webhook-id') ?? '',
    timestamp: new Date(Number(header('webhook-timestamp')) * 1000),
    signature: header('webhook-signature'),
    body: JSON.stringify(JSON.parse(object ?? 'null')),
  };
}

/** A receiver example of the docs, and how its readers make it runnable. */
interface Example {
  /** Its file in docs/examples. */
  readonly file: string;
  /** Makes it runnable, building what it needs in `directory`; how it is then started on a port. */
  readonly prepare: (directory: string) => Promise<(port: number) => ExampleCommand>;
}

const EXAMPLES: readonly Example[] = [
  {
    file: 'receive-webhooks.mjs',
    prepare: () =>
      Promise.resolve((port) => [
        process.execPath,
        [join(EXAMPLES_DIRECTORY, 'receive-webhooks.mjs'), String(port)],
      ]),
  },
  {
    file: 'receive_webhooks.py',
    prepare: () =>
      Promise.resolve((port) => [
        'python3',
        [join(EXAMPLES_DIRECTORY, 'receive_webhooks.py'), String(port)],
      ]),
  },
  {
    file: 'ReceiveWebhooks.cs',
    prepare: async (directory) => {
      const program = join(directory, 'ReceiveWebhooks.exe');
      await compileCSharpExample('ReceiveWebhooks.cs', program, { packages: 'mono-complete' });
      return (port) => ['mono', [program, String(port)]];
    },
  },
];

const directories = new TemporaryDirectories('webhook-examples');
afterAll(() => directories.removeAll());

it('the deliveries’ contract is Standard Webhooks’, as its package verifies it', () => {
  expect(DELIVERIES.map((delivery) => [delivery.what, packageAccepts(delivery)])).toEqual(
    DELIVERIES.map((delivery) => [delivery.what, delivery.accepted]),
  );
});

it('the delivery docs/webhooks.md shows is signed as Standard Webhooks signs it, with its example secret', () => {
  const { secret, id, timestamp, signature, body } = deliveryOfTheDocs();
  expect(JSON.parse(body)).toMatchObject({ id, type: 'property-sales.transaction.agents-changed' });
  expect(signature).toBe(new Webhook(secret).sign(id, timestamp, body));
});

for (const example of EXAMPLES) {
  describe(`the receiver example ${example.file} of docs/webhooks.md`, () => {
    let receiver: ExampleProcess;
    let port: number;

    beforeAll(async () => {
      const command = await example.prepare(await directories.make());
      port = await freePort();
      receiver = await ExampleProcess.start(
        command(port),
        { WEBHOOK_SECRET: SECRET },
        `Listening on port ${port}`,
      );
    });

    afterAll(() => receiver?.stop());

    const deliver = async ({ headers, body }: Delivery) =>
      (
        await fetch(`http://127.0.0.1:${port}/webhooks/property-sales`, {
          method: 'POST',
          headers: { 'content-type': 'application/cloudevents+json; charset=utf-8', ...headers },
          body,
        })
      ).status;

    it('answers 204 exactly the deliveries Standard Webhooks’ verify accepts, 401 the others', async () => {
      const answers: { what: string; status: number }[] = [];
      for (const delivery of DELIVERIES)
        answers.push({ what: delivery.what, status: await deliver(delivery) });

      expect(answers).toEqual(
        DELIVERIES.map((delivery) => ({
          what: delivery.what,
          status: packageAccepts(delivery) ? 204 : 401,
        })),
      );
    });

    it('handles each accepted delivery once, after answering it, and says why it refused the others', async () => {
      const handled = DELIVERIES.filter(
        (delivery, index) =>
          delivery.accepted &&
          DELIVERIES.findIndex(
            (other) => other.headers['webhook-id'] === delivery.headers['webhook-id'],
          ) === index,
      );
      await receiver.until(() => receiver.lines.length >= handled.length, 'to handle them');
      await sleep(200);

      // The body printed as it was sent, byte for byte (its UTF-8 name too), the retry not again. The
      // handling comes after the answer, so deliveries sent one after another may be handled in
      // either order.
      expect([...receiver.lines].sort()).toEqual(handled.map((delivery) => delivery.body).sort());
      expect(receiver.log).toContain(`Skipped delivery ${first.headers['webhook-id']}`);
      for (const refused of DELIVERIES.filter((delivery) => !delivery.accepted))
        expect(receiver.log).toContain(`Refused delivery ${refused.headers['webhook-id']}: `);
    });
  });
}
