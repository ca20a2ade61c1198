/**
 * Every environment variable the service reads, with its default and meaning: the configuration
 * table of docs/configuration.md is written from this list (`npm run docs:config`), and
 * app-config.spec.ts checks the list against what loadAppConfig and the tracing switch actually read,
 * so neither the list nor the page can drift from the code.
 */
export interface ConfigurationVariable {
  /** The variables of one row: several when they only make sense together. */
  readonly names: readonly string[];
  /** The row's first cell when it is not the names themselves (variables read by a library). */
  readonly label?: string;
  /** The default, as Markdown text. */
  readonly default: string;
  /** What it does, as Markdown text. */
  readonly meaning: string;
}

export const CONFIGURATION_VARIABLES: readonly ConfigurationVariable[] = [
  { names: ['PORT'], default: '`3000`', meaning: 'HTTP port.' },
  {
    names: ['DATABASE_URL'],
    default: '`sqlite:data/property-sales.sqlite`',
    meaning:
      '`sqlite:<file>` (relative to the working directory), `sqlite::memory:`, `mysql://user:pass@host:3306/db` or `mariadb://…`, either for MySQL or MariaDB: the service asks the server which it is (`SELECT VERSION()`) and speaks its SQL, whatever the scheme says. The nodes of a Galera cluster as `mariadb://user:pass@host1:3306,host2:3306,host3:3306/db`: see [High availability](deployment.md#high-availability-galera).',
  },
  {
    names: ['DATABASE_READ_URLS'],
    default: '(empty: none)',
    meaning:
      'On MySQL, read replicas: comma-separated `mysql://`/`mariadb://` URLs. Plain reads go to them; everything else stays on the primary. See [Read replicas](deployment.md#read-replicas).',
  },
  {
    names: ['DATABASE_REPLICA_RETRY_MS'],
    default: '`5000`',
    meaning:
      'With replicas, or several nodes in `DATABASE_URL`: how long a server whose connections failed (or a node found out of sync) is left out before it is tried again (100 to 600000). A replica left out this way is checked again once it has passed.',
  },
  {
    names: ['DATABASE_REPLICA_FALLBACK'],
    default: '`primary`',
    meaning:
      'With replicas: where reads go while no replica serves. `primary`: to the primary, which then takes every read; `none`: nowhere, reads answer 503 with `Retry-After` (for a primary that must be spared the reads). See [Operating it](operations.md#operating-it).',
  },
  {
    names: ['DATABASE_REPLICA_MAX_LAG_SECONDS'],
    default: '`5`',
    meaning:
      'With replicas: a replica further behind its primary than this (`Seconds_Behind_Master` of `SHOW SLAVE STATUS`), or whose replication is stopped, is left out until it catches up, so a read after a write never goes back in time by more than this (plus 1 s and a check). `0` checks no lag: a replica serves whenever it answers (0 to 86400).',
  },
  {
    names: ['DATABASE_NODE_CHECK_MS'],
    default: '`1000`',
    meaning:
      'With several nodes in `DATABASE_URL`: how often each is asked whether it serves (on Galera: `wsrep_ready` ON, `wsrep_local_state_comment` Synced, `wsrep_cluster_status` Primary); with replicas, how often each is asked `SHOW SLAVE STATUS` (100 to 600000).',
  },
  {
    names: ['API_PREFIX'],
    default: '`api`',
    meaning: 'Path prefix of the API routes; empty serves them at the root.',
  },
  {
    names: ['APP_TIMEZONE'],
    default: '`UTC`',
    meaning:
      'IANA zone: dates are written with its offset (`+00:00` for UTC), and dates sent without an offset are read in it. Stored as UTC instants.',
  },
  {
    names: ['XML_NAMESPACE'],
    default: '`http://schemas.datacontract.org/2004/07/PropertySales.Models`',
    meaning: 'Default namespace of XML bodies.',
  },
  {
    names: ['BODY_LIMIT'],
    default: '`1mb`',
    meaning: 'Largest request body; larger ones get 413.',
  },
  {
    names: ['DEMO_DATA'],
    default: '`true`',
    meaning: 'On SQLite, load the demo data set into an empty database at start. Never on MySQL.',
  },
  {
    names: ['IMPORT_MAX_RECORD_SIZE'],
    default: '`1mb`',
    meaning:
      "Longest record `npm run data:import` reads, in characters of its file (a byte each in ASCII): a longer one stops the import with the file, the record and a line, before it is parsed. Reading a record takes several times its size in memory, so this bounds the import's memory whatever the file holds. A record of the seed's limits (texts of 4000 characters) is a few tens of kilobytes.",
  },
  {
    names: ['MIGRATIONS_RUN'],
    default: '`false`',
    meaning:
      'On MySQL, apply pending migrations at start; without it the service refuses to start while any is pending. SQLite is always migrated at start.',
  },
  {
    names: ['SCHEMA_CHECK_INTERVAL_MS'],
    default: '`30000`',
    meaning:
      'On MySQL, how long `/health/ready` reuses a check of the schema before comparing it again (0: every probe).',
  },
  {
    names: ['LOG_LEVEL'],
    default: '`info`',
    meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  },
  {
    names: ['LOG_REDACT_QUERY_PARAMETERS'],
    default: 'empty',
    meaning:
      'Query parameters whose values the request log and the trace spans replace with `REDACTED`, comma-separated (letters, digits, `- . _ ~`, up to 128 each), besides the built-in credential names (see [OpenAPI, health and logs](operations.md#openapi-health-and-logs)). Compared ignoring case and `-`, `_`, `.`.',
  },
  {
    names: ['LOG_FORMAT'],
    default: '`json`',
    meaning:
      "`json`: one JSON line per event; `pretty`: readable lines for a developer's terminal (needs the dev dependencies).",
  },
  {
    names: ['TRUST_PROXY'],
    default: '`false`',
    meaning:
      'Which hops may set `X-Forwarded-For`/`-Proto` (Express `trust proxy`): `true`, a hop count, or addresses and subnets such as `loopback, 10.0.0.0/8`.',
  },
  {
    names: ['CORS_ORIGINS'],
    default: '(empty: CORS off)',
    meaning:
      'Comma-separated origins allowed to call the API from a browser, e.g. `https://app.example.com`.',
  },
  {
    names: ['SHUTDOWN_TIMEOUT_MS'],
    default: '`10000`',
    meaning:
      'After the drain, how long in-flight requests may take to finish before the process exits anyway (code 1).',
  },
  {
    names: ['SHUTDOWN_DRAIN_MS'],
    default: '`5000`',
    meaning:
      "On SIGTERM, how long `/health/ready` answers 503 while requests are still served, before the listener closes: longer than the gateway's health-check interval times its failure threshold.",
  },
  {
    names: ['HTTP_HEADERS_TIMEOUT_MS'],
    default: '`10000`',
    meaning: 'A request head must arrive within this; else 408 and the connection is closed.',
  },
  {
    names: ['HTTP_REQUEST_TIMEOUT_MS'],
    default: '`30000`',
    meaning:
      'A whole request, head and body, must arrive within this (at least `HTTP_HEADERS_TIMEOUT_MS`); else 408.',
  },
  {
    names: ['HTTP_KEEP_ALIVE_TIMEOUT_MS'],
    default: '`65000`',
    meaning:
      "An idle keep-alive connection is closed after this. Keep it longer than the gateway's idle timeout (60 s on common load balancers), so the gateway closes idle connections first.",
  },
  {
    names: ['HTTP_MAX_CONNECTIONS'],
    default: '`1000`',
    meaning:
      "Open connections at most (2 to 1000000). At it, a new connection closes an idle one (waiting for its first request or kept alive between two: the oldest of the address holding the most), and is refused only when none is idle. Requests in progress, other than `/health/live` and `/health/ready`, take all of it but a tenth (rounded up); past that, 503 `server_busy` with `Retry-After` and `Connection: close`, so the probes and new clients always find a connection. Keep it below the process's open-file limit.",
  },
  {
    names: ['HTTP_MAX_CONNECTIONS_PER_CLIENT'],
    default: '`256`; `0` when `TRUST_PROXY` is set',
    meaning:
      "Open connections from one client address at most; past it that address's new connections are closed at once, other addresses' unaffected. `0`: no cap. Behind a gateway every connection comes from the gateway, so none by default there.",
  },
  {
    names: ['HEALTH_PORT'],
    default: '(empty: none)',
    meaning:
      'A second port serving only `/health/live` and `/health/ready`, with the same timeouts but outside both connection caps, so probes answer whatever clients hold of `PORT` (which must differ), a flood of probes among them. Other paths there: 404.',
  },
  {
    names: ['BODY_MIN_BYTES_PER_SECOND'],
    default: '`240`',
    meaning:
      'A body must average at least this once `BODY_RATE_GRACE_MS` has passed; else 408 and the connection is closed. `0`: no minimum.',
  },
  {
    names: ['BODY_RATE_GRACE_MS'],
    default: '`5000`',
    meaning: 'How long a body may arrive slower than the minimum rate.',
  },
  {
    names: ['BODY_DRAIN_LIMIT'],
    default: '`4mb`',
    meaning:
      'After an answer sent before the body was read that keeps the connection (415, a 400 on the headers), a rest up to this is read and discarded so that the keep-alive connection carries the next request (`Connection: keep-alive`); a longer or chunked one is answered `Connection: close`. `0`: always close. A refusal (401, 403, 413, 429) always closes the connection.',
  },
  {
    names: ['AUTH_MODE'],
    default: '`none` on SQLite; required on MySQL',
    meaning:
      '`none` (the gateway authenticates), `apikey` or `jwt`. The service refuses to start on MySQL unless it is set.',
  },
  {
    names: ['AUTH_API_KEYS'],
    default: '(none)',
    meaning:
      'With `apikey`: `name=sha256:<hex>[:scope+scope…]` entries, comma-separated. The name is the caller\'s identity; the hash is `printf %s "$KEY" | sha256sum`; the scopes are what the key may call (see [Authorization](security.md#authorization)). A key listed without scopes may call everything, and the start-up log says so.',
  },
  {
    names: ['AUTH_JWKS_URL', 'AUTH_JWT_PUBLIC_KEY'],
    default: '(none)',
    meaning:
      "With `jwt`, one of them: the issuer's JWKS URL, or a PEM public key (`\\n` escapes allowed).",
  },
  {
    names: ['AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE'],
    default: '(none)',
    meaning: 'With `jwt`: the `iss` and `aud` every token must carry.',
  },
  {
    names: ['AUTH_JWT_ALGORITHMS'],
    default: '`RS256`',
    meaning:
      'Accepted asymmetric algorithms, comma-separated (`RS256`, `PS256`, `ES256`, `EdDSA`…).',
  },
  {
    names: ['AUTH_JWT_CLOCK_SKEW_SECONDS'],
    default: '`30`',
    meaning: 'Tolerance on `exp`/`nbf`, at most 300.',
  },
  {
    names: ['AUTH_JWT_MAX_LIFETIME_SECONDS'],
    default: '`86400`',
    meaning:
      'Longest token lifetime (`exp` - `iat`) accepted, 60 to 604800; a token without `iat`, or living longer, is refused with 401.',
  },
  {
    names: ['AUTH_JWT_ROLE_SCOPES'],
    default: '(empty)',
    meaning:
      "With `jwt`: `role=scope+scope…` entries, comma-separated: the scopes a token's `roles` claim grants besides its `scope` and `scp` (app roles of client-credentials tokens).",
  },
  {
    names: ['AUTH_JWT_TOKEN_URL'],
    default: '(empty)',
    meaning:
      "With `jwt`: the identity provider's token endpoint. Only when it is set does the OpenAPI document offer the OAuth 2.0 client-credentials flow (in Swagger UI's Authorize dialog), with it as the token URL.",
  },
  {
    names: ['SWAGGER'],
    default: '`public`',
    meaning:
      '`public`, `protected` (same authentication as the API, scope `api-docs:read`) or `off`.',
  },
  {
    names: ['PUBLIC_BASE_URL'],
    default: '(empty: the root of the host the document is loaded from)',
    meaning:
      'Where clients reach the service, as the gateway publishes it: `https://api.example.com/property-sales`, or a path such as `/property-sales`. The OpenAPI document\'s server: the address Swagger UI\'s "Try it out" calls and generated clients take as their default base URL. Set it when a gateway serves the service under a path.',
  },
  {
    names: ['SERVICE_COMMIT'],
    default: '`unknown`',
    meaning:
      'The source commit this build is of: the `commit` label of `property_sales_build_info`. The image sets it from its `SERVICE_COMMIT` build argument (`docker build --build-arg SERVICE_COMMIT=$(git rev-parse HEAD)`).',
  },
  {
    names: ['METRICS'],
    default: '`public`',
    meaning:
      'Prometheus metrics at `/metrics`: `public`, `protected` (same authentication as the API, scope `metrics:read`), `health-port` (open on `HEALTH_PORT` alone, which it needs; the main port answers 404) or `off`.',
  },
  {
    names: [
      'OTEL_TRACES_EXPORTER',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    ],
    default: '(unset: tracing off)',
    meaning:
      "OpenTelemetry tracing is on when an exporter is named (`otlp`, `console`, `zipkin`) or a collector's address is given (then OTLP, `http/protobuf` unless `OTEL_EXPORTER_OTLP_PROTOCOL` says `http/json` or `grpc`). Unset, the SDK is not loaded at all.",
  },
  {
    names: ['OTEL_SDK_DISABLED'],
    default: '`false`',
    meaning:
      '`true` keeps tracing off whatever else is set, as does `none` in `OTEL_TRACES_EXPORTER`.',
  },
  {
    names: [],
    label: 'Other `OTEL_*`',
    default: "the SDK's defaults",
    meaning:
      "Read by the OpenTelemetry SDK once tracing is on: `OTEL_SERVICE_NAME` (default `property-sales-service`; `service.version` is the package version), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` (default `parentbased_always_on`), `OTEL_PROPAGATORS` (default `tracecontext,baggage`), `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (10 s), `OTEL_BSP_*`, `OTEL_LOG_LEVEL` (the SDK's own diagnostics). `OTEL_METRICS_EXPORTER`, `OTEL_LOGS_EXPORTER` and `OTEL_CONFIG_FILE` are not used: metrics are at `/metrics`, logs on stdout.",
  },
  {
    names: ['RATE_LIMIT'],
    default: '`0` (off)',
    meaning:
      'Requests per caller per window; requests without valid credentials count per client address. Past it, 429 with `Retry-After`.',
  },
  { names: ['RATE_LIMIT_WINDOW_SECONDS'], default: '`60`', meaning: 'The rate-limit window.' },
  {
    names: ['AUTH_FAILURE_LIMIT'],
    default: '`20` with `AUTH_MODE` `apikey` or `jwt`, else `0`',
    meaning:
      'Failed authentications per client address per window; past it, the address is answered 429 before its credentials are checked. `0` turns it off.',
  },
  {
    names: ['REDIS_URL'],
    default: '(empty: in memory)',
    meaning:
      '`redis://[user:password@]host:6379[/db]` or `rediss://…`: all instances count rate limits there, so together they allow `RATE_LIMIT` once.',
  },
  {
    names: ['RATE_LIMIT_KEY_PREFIX'],
    default: '`property-sales:rate-limit:`',
    meaning:
      'Prefix of the rate-limit keys in Redis: shared by the instances of one service, by nothing else.',
  },
  {
    names: ['DATABASE_TIMEOUT_MS'],
    default: '`5000`',
    meaning:
      'Longest a request waits on the database before it is answered 503 with `Retry-After`.',
  },
  {
    names: ['EVENTS_URL'],
    default: '(empty: no broker)',
    meaning:
      'The RabbitMQ broker the integration events are published to: `amqp://user:password@host:5672/vhost`, or `amqps://…` for TLS. Unset, nothing is published to a broker. The import command needs it too: a run without it writes no DataImported event. See [Integration events](integration-events.md).',
  },
  {
    names: ['EVENTS_EXCHANGE'],
    default: '`property-sales.events`',
    meaning:
      'The durable topic exchange the service declares and publishes to: 1 to 255 letters, digits, `_`, `.`, `:` or `-`, not starting with `amq.`.',
  },
  {
    names: ['EVENTS_SOURCE'],
    default: '`urn:property-sales-service`',
    meaning:
      'The CloudEvents `source` of every event: this service, as its consumers name it (a URI reference, no spaces).',
  },
  {
    names: ['EVENTS_SCHEMA_URL'],
    default: '`http://localhost:3000/asyncapi-json` (on the port of `PORT`)',
    meaning:
      "The `http://` or `https://` address at which consumers read the AsyncAPI document: this service's `/asyncapi-json` as they reach it (through a gateway, say), or a copy published elsewhere. Every event's CloudEvents `dataschema` is this address with the JSON Pointer of its data schema (`#/components/schemas/AgentsChanged`). Set it wherever consumers run on other machines: the default resolves only on the service's own. See [Consuming events](consuming-events.md#the-envelope).",
  },
  {
    names: ['EVENTS_RETENTION_MS'],
    default: '`86400000` (a day)',
    meaning:
      'How long an event stays in the outbox once every consumer (the broker, each in-process handler) has it (0 to 2678400000, 31 days). With `EVENTS_FEED`, also how long the feed serves it: an event is purged once the event after it is this old, so a reader that reads again within it never finds its last id gone.',
  },
  {
    names: ['EVENTS_POLL_MS'],
    default: '`500`',
    meaning:
      'How often an instance looks in the outbox for events committed by other instances or the import command; its own commits are relayed at once (10 to 60000). Feed readers waiting with `timeout` hear of commits by other instances as often.',
  },
  {
    names: ['EVENTS_FEED'],
    default: '`false`',
    meaning:
      '`true` serves the committed events over HTTP, `GET /api/Events` (scope `events:read`), for consumers that catch up from their last event id or cannot reach the broker: see [Consuming events](consuming-events.md#the-event-feed). On, every write stores its events in the outbox, with or without a broker (what that costs UpdateAgents: [Integration events](integration-events.md)). Off, the route answers 404 saying so. The import command needs it too to write its DataImported event.',
  },
  {
    names: ['EVENTS_FEED_MAX_WAITING'],
    default: 'half of `HTTP_MAX_CONNECTIONS` (`500`)',
    meaning:
      'The most feed readers waiting for an event (`timeout` above 0) on an instance at once; one more answers 503 `event_feed_full` with `Retry-After`, and the gateway may send it to another instance (1 to half of `HTTP_MAX_CONNECTIONS`: with `EVENTS_FEED` on, the service refuses to start above it). Each holds a connection, so the other half of the connections serve the other requests; not a database connection: a wake-up (`EVENTS_FEED_WAKE_MS`) answers them all with one read and one body per position.',
  },
  {
    names: ['EVENTS_FEED_MAX_WAITING_PER_CALLER'],
    default: '`20`',
    meaning:
      "The most feed readers one caller (an API key, a token's subject; without authentication, a client address) may have waiting at once on an instance; one more answers 429 `event_feed_waits_exceeded` with `Retry-After` (1 to 100000).",
  },
  {
    names: ['EVENTS_FEED_WAKE_MS'],
    default: '`250`',
    meaning:
      'The least time between two wake-ups of the feed readers waiting on an instance (0 to 10000): the first commit after a quiet spell wakes them at once, and the commits within the interval after a wake-up are gathered into one more at its end, which answers each waiting reader once, with one page read and built for all. With `EVENTS_FEED_WAKE_MS_PER_READER` the interval grows with the readers waiting. A waiting reader gets an event at most the interval after its commit (and the look at the outbox that gives it its position). 0 wakes them after every commit, one look at a time. See [Consuming events](consuming-events.md#the-event-feed).',
  },
  {
    names: ['EVENTS_FEED_WAKE_MS_PER_READER'],
    default: '`8`',
    meaning:
      "How much longer the interval between two wake-ups of the waiting feed readers is for each reader waiting, in ms (0 to 100): a wake-up answers every waiting reader (each answer and the reader's next request cost the instance 0.3 ms of CPU at rest, over 1 ms on a busy two-core machine), so the readers cost a share of the instance that stays the same however many wait: with 8 ms, 125 answers a second (500 readers: a wake-up every 4 s, 2000: every 16 s). 0 keeps `EVENTS_FEED_WAKE_MS` whatever their number. See [Performance](performance.md#feed-readers-waiting).",
  },
  {
    names: ['WEBHOOKS'],
    default: '`false`',
    meaning:
      '`true` serves the webhook subscriptions (`/api/Webhook/…`, scope `webhooks:manage`) and POSTs every committed event a subscription selects to its URL, signed as Standard Webhooks specifies: see [Webhooks](webhooks.md). On, every write stores its events in the outbox. Off, the routes answer 404 saying so and nothing is delivered.',
  },
  {
    names: ['WEBHOOKS_ALLOW_HTTP'],
    default: '`false`',
    meaning:
      '`true` lets a subscription name an `http://` URL (development and tests); otherwise only `https://` is taken (400).',
  },
  {
    names: ['WEBHOOKS_ALLOW_PRIVATE_NETWORKS'],
    default: '`false`',
    meaning:
      '`true` lets a webhook URL name or resolve to a non-public address: loopback, private, link-local, unique-local, carrier-grade NAT, cloud metadata, or any other outside the public unicast ranges (development and tests). Otherwise such a URL is refused 400 when subscribed, and each delivery checks the addresses its name resolves to again, refusing to connect to any such (counted `refused`).',
  },
  {
    names: ['WEBHOOKS_TIMEOUT_MS'],
    default: '`10000`',
    meaning:
      "How long one delivery may take, from connecting to the end of the answer, before it counts as a time-out and is retried (100 to 60000); and how long a look-up of a subscription's host name may take, at registration (400 past it) and at each connection.",
  },
  {
    names: ['WEBHOOKS_DISABLE_AFTER_MS'],
    default: '`432000000` (5 days)',
    meaning:
      'A subscription whose deliveries have failed without a success for this long is disabled (its status `disabled`, a log line, `webhook_subscriptions_disabled`); ResumeWebhook enables it again, from its checkpoint (1000 to 2678400000).',
  },
  {
    names: ['WEBHOOKS_SECRET_GRACE_MS'],
    default: '`86400000` (a day)',
    meaning:
      'After RotateWebhookSecret, how long the previous secret still signs each delivery beside the new one (a second `v1,` signature), so that a subscriber can switch without missing one (0 to 2678400000).',
  },
  {
    names: ['WEBHOOKS_RETRY_BASE_MS'],
    default: '`1000`',
    meaning:
      "The unit of the retry schedule, which is Standard Webhooks' (after a failure at once, then after 5, 300, 1800, 7200, 18000, 36000 units, then 36000 again; each ±20% at random, never past `WEBHOOKS_DISABLE_AFTER_MS`): 1000 makes it at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h. Tests shorten it (1 to 60000).",
  },
  {
    names: ['WEBHOOKS_MAX_PER_OWNER'],
    default: '`25`',
    meaning:
      "The most webhook subscriptions one owner (an API key's name, a token's subject) may have; CreateWebhook beyond it answers 409 `webhook_limit_reached` and creates nothing. The operator's own (made without authentication) count only toward `WEBHOOKS_MAX_SUBSCRIPTIONS` (1 to 10000).",
  },
  {
    names: ['WEBHOOKS_MAX_SUBSCRIPTIONS'],
    default: '`10000`',
    meaning:
      'The most webhook subscriptions the service holds, whoever owns them. An idle one costs a row read when the subscriptions change, and nothing while events of its kinds do not come. CreateWebhook beyond it answers 409 `webhook_limit_reached` and creates nothing (1 to 100000).',
  },
  {
    names: ['WEBHOOKS_CONCURRENCY'],
    default: '`64`',
    meaning:
      'The most subscriptions an instance delivers to at once, each a run of up to 100 events one after the other; past it, the subscriptions that have waited longest go first. A subscriber that times out holds one of them for up to `WEBHOOKS_TIMEOUT_MS` a delivery (1 to 1000).',
  },
  {
    names: ['WEBHOOKS_METRICS_SUBSCRIPTIONS'],
    default: '`100`',
    meaning:
      'The most subscriptions `webhook_pending_events` and `webhook_oldest_undelivered_age_seconds` name: every one while there are no more, otherwise those furthest behind (the oldest undelivered event first), so that the series stay few and the delivery alert fires at any number of subscriptions (1 to 10000).',
  },
];

const TABLE_START = '<!-- configuration-table:start (npm run docs:config writes this table) -->';
const TABLE_END = '<!-- configuration-table:end -->';

/** A Markdown table cell: a pipe would end it. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Characters, as Prettier counts a cell's width (`…` is one). */
const width = (text: string) => [...text].length;

/** The configuration table as Markdown, its columns aligned as Prettier aligns them. */
export function configurationTable(): string {
  const rows = [
    ['Variable', 'Default', 'Meaning'],
    ...CONFIGURATION_VARIABLES.map((variable) => [
      variable.label ?? variable.names.map((name) => `\`${name}\``).join(', '),
      variable.default,
      variable.meaning,
    ]).map((cells) => cells.map(cell)),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((cells) => width(cells[column]))));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((text, column) => text + ' '.repeat(widths[column] - width(text))).join(' | ')} |`;
  const [heading, ...body] = rows;
  return [line(heading), line(widths.map((size) => '-'.repeat(size))), ...body.map(line)].join(
    '\n',
  );
}

/** The page with the table between its markers replaced by the table the list makes. */
export function withConfigurationTable(page: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`The page has no ${TABLE_START} ... ${TABLE_END} markers`);
  }
  return `${page.slice(0, start + TABLE_START.length)}\n\n${configurationTable()}\n\n${page.slice(end)}`;
}
