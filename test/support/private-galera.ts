import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PrivateMariaDb, SERVER_OPTIONS } from './private-mariadb';

const PROVIDER = '/usr/lib/galera/libgalera_smm.so';
const SST_USER = 'sst';
const SST_PASSWORD = 'sst-secret';

/**
 * The wsrep ports (group communication, incremental and full state transfer) are taken from below
 * the kernel's ephemeral range (32768 and up): the state transfer's listener binds late, and an
 * outgoing connection may meanwhile have been given a port of that range.
 */
const LOW_PORTS = { from: 20000, to: 32000 };

/** A port free on 127.0.0.1 below the ephemeral range. */
async function lowPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = LOW_PORTS.from + Math.floor(Math.random() * (LOW_PORTS.to - LOW_PORTS.from));
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
}

interface WsrepPorts {
  readonly gcomm: number;
  readonly ist: number;
  readonly sst: number;
}

/** A node's wsrep state: `Synced` once it serves, in the primary component. */
async function localState(node: PrivateMariaDb): Promise<string | undefined> {
  try {
    const [rows] = (await node.query(
      "SELECT VARIABLE_VALUE AS state FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT'",
    )) as [{ state: string }[]];
    return rows[0]?.state;
  } catch {
    return undefined;
  }
}

/**
 * A MariaDB Galera cluster that one test file owns: three nodes (by default) on 127.0.0.1, each a
 * PrivateMariaDb with ports of its own, joined by full state transfer with mariadb-backup, as a
 * production cluster is. Starting fails loudly, with the failing node's log; it never skips.
 */
export class PrivateGaleraCluster {
  private constructor(readonly nodes: readonly PrivateMariaDb[]) {}

  static async create(size = 3): Promise<PrivateGaleraCluster> {
    const taken = new Set<number>();
    const ports: WsrepPorts[] = [];
    for (let index = 0; index < size; index++)
      ports.push({
        gcomm: await lowPort(taken),
        ist: await lowPort(taken),
        sst: await lowPort(taken),
      });
    const address = `gcomm://${ports.map(({ gcomm }) => `127.0.0.1:${gcomm}`).join(',')}`;
    const nodes: PrivateMariaDb[] = [];
    const cluster = new PrivateGaleraCluster(nodes);
    try {
      for (const [index, port] of ports.entries()) {
        nodes.push(
          await PrivateMariaDb.prepare({
            install: index === 0,
            options: [
              // mariadb-backup refuses the buffer pool size the transfer script hands it on.
              ...SERVER_OPTIONS.filter((option) => !option.startsWith('--innodb-buffer-pool-size')),
              '--binlog-format=ROW',
              '--default-storage-engine=InnoDB',
              '--innodb-autoinc-lock-mode=2',
              '--wsrep-on=ON',
              `--wsrep-provider=${PROVIDER}`,
              '--wsrep-cluster-name=property-sales-test',
              `--wsrep-cluster-address=${address}`,
              `--wsrep-node-name=node${index + 1}`,
              `--wsrep-node-address=127.0.0.1:${port.gcomm}`,
              `--wsrep-sst-receive-address=127.0.0.1:${port.sst}`,
              '--wsrep-sst-method=mariabackup',
              `--wsrep-sst-auth=${SST_USER}:${SST_PASSWORD}`,
              `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${port.gcomm};ist.recv_addr=127.0.0.1:${port.ist};gcache.size=16M`,
            ],
          }),
        );
      }
      const [first, ...joiners] = nodes;
      await first.start(60000, ['--wsrep-new-cluster']);
      await cluster.synced(0);
      await first.query(
        `CREATE USER '${SST_USER}'@'localhost' IDENTIFIED BY '${SST_PASSWORD}'`,
        `GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR ON *.* TO '${SST_USER}'@'localhost'`,
      );
      // One at a time: a donor serves one joiner.
      for (const [index, joiner] of joiners.entries()) {
        await joiner.start(120000);
        await cluster.synced(index + 1);
      }
      return cluster;
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
  }

  /** Resolves once the node serves, in sync with the cluster; rejects with its log otherwise. */
  async synced(index: number, timeoutMs = 120000): Promise<void> {
    const node = this.nodes[index];
    const deadline = Date.now() + timeoutMs;
    let state: string | undefined;
    while (Date.now() < deadline) {
      state = await localState(node);
      if (state === 'Synced') return;
      if (!node.running) break;
      await sleep(100);
    }
    throw new Error(
      `Galera node ${index + 1} is not Synced (${state ?? 'no answer'}):\n${(await node.log()).slice(-4000)}`,
    );
  }

  /** The service's DATABASE_URL for a database through one node. */
  urlFor(index: number, database: string): string {
    return this.nodes[index].urlFor(database);
  }

  /** Stops every node (SIGKILL) and removes their data. */
  async destroy(): Promise<void> {
    await Promise.allSettled([...this.nodes].reverse().map((node) => node.destroy()));
  }
}
