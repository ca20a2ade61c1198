/**
 * Event feed readers as light as they can be, in a process of their own (the bench forks it with the
 * service's URL, the id of the event to read after and how many readers): each waits for the feed's
 * next events with a long poll and asks again after the last one, as partners read it, but reads an
 * answer as bytes and parses its last event alone, for the id to ask after. So what the bench measures
 * is the service's side, and the load generator keeps its event loop to itself. Asked `counts`, it
 * answers with what the readers received and its CPU time; asked `stop`, it stops them and exits.
 */

/** What the readers received. */
export interface FeedReadings {
  readonly answers: number;
  readonly events: number;
  readonly bytes: number;
  /** The CPU time of this process, user and system, in seconds. */
  readonly cpuSeconds: number;
}

/** How every event in the feed begins: the service writes each so (cloudEventJson). */
const EVENT_START = '{"specversion":';

const [url, from, count] = process.argv.slice(2);
const received = { answers: 0, events: 0, bytes: 0 };
const stop = new AbortController();

/** The id of the last event of a page; undefined for an empty page. */
function lastId(page: Buffer): string | undefined {
  const start = page.lastIndexOf(EVENT_START);
  if (start < 0) return undefined;
  // The last event runs to the array's closing bracket.
  return (JSON.parse(page.toString('utf8', start, page.length - 1)) as { id: string }).id;
}

function countEvents(page: Buffer): number {
  let events = 0;
  for (let at = page.indexOf(EVENT_START); at >= 0; at = page.indexOf(EVENT_START, at + 1))
    events++;
  return events;
}

async function read(after: string | undefined): Promise<void> {
  let last = after;
  while (!stop.signal.aborted) {
    const query = last === undefined ? '' : `&lastEventId=${last}`;
    const answer = await fetch(`${url}/api/Events?limit=1000&timeout=30000${query}`, {
      signal: stop.signal,
    });
    const page = Buffer.from(await answer.arrayBuffer());
    if (answer.status !== 200) throw new Error(`GET /api/Events: ${answer.status}`);
    received.answers++;
    received.bytes += page.length;
    received.events += countEvents(page);
    last = lastId(page) ?? last;
  }
}

const readers = Array.from({ length: Number(count) }, () =>
  read(from === '' ? undefined : from).catch((error: unknown) => {
    if (!stop.signal.aborted) throw error;
  }),
);

process.on('message', (message) => {
  if (message === 'counts') {
    const cpu = process.cpuUsage();
    const readings: FeedReadings = { ...received, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
    process.send!(readings);
  } else if (message === 'stop') {
    stop.abort();
    void Promise.all(readers).then(() => process.exit(0));
  }
});
