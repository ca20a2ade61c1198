import ipaddr from 'ipaddr.js';
import { pbkdf2 } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { promisify } from 'node:util';
import { WebhookSender } from './webhook-sender';
import {
  checkTarget,
  isPublicAddress,
  TargetRefusal,
  TargetResolver,
  targetUrl,
} from './webhook-targets';

const STRICT = { allowHttp: false, allowPrivateNetworks: false };

/** DNS's record types for IPv4 (A) and IPv6 (AAAA) addresses, by address family. */
const RECORD_TYPES: Record<number, number> = { 1: 4, 28: 6 };

/**
 * A name server on a loopback port, as the resolver asks one over UDP: it answers A and AAAA
 * queries with `zone`'s addresses of the name, NXDOMAIN for a name not in it, and nothing at all
 * for a name whose entry is 'silent'.
 */
async function startNameServer(
  zone: Record<string, readonly string[] | 'silent'>,
): Promise<Socket> {
  const server = createSocket('udp4');
  server.on('message', (query, from) => {
    const labels: string[] = [];
    let at = 12;
    for (; query[at] !== 0; at += query[at] + 1)
      labels.push(query.toString('latin1', at + 1, at + 1 + query[at]));
    const type = query.readUInt16BE(at + 1);
    const entry = zone[labels.join('.').toLowerCase()];
    if (entry === 'silent') return;
    const answers = (entry ?? [])
      .filter((address) => isIP(address) === RECORD_TYPES[type])
      .map((address) => {
        const data = Buffer.from(ipaddr.parse(address).toByteArray());
        const record = Buffer.alloc(12);
        record.writeUInt16BE(0xc00c, 0); // the name: the question's, by a pointer to it
        record.writeUInt16BE(type, 2);
        record.writeUInt16BE(1, 4); // class IN
        record.writeUInt32BE(60, 6); // TTL
        record.writeUInt16BE(data.length, 10);
        return Buffer.concat([record, data]);
      });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(entry ? 0x8180 : 0x8183, 2); // an answer, recursion available; NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    server.send(
      Buffer.concat([header, query.subarray(12, at + 5), ...answers]),
      from.port,
      from.address,
    );
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  return server;
}

describe('webhook targets', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'IPv6 loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'IPv6 link-local'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['240.0.0.1', 'reserved'],
    ['::', 'IPv6 unspecified'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::10.0.0.1', 'IPv4-compatible private'],
    ['::8.8.8.8', 'IPv4-compatible, a deprecated form'],
    ['::ffff:169.254.169.254', 'IPv4-mapped cloud metadata'],
    ['::ffff:0:a00:1', 'IPv4-translated private'],
    ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['2002:a00:1::1', '6to4 of a private address'],
    ['2002:808:808::1', '6to4, a deprecated form'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'Teredo of a private address'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['ff0e::1', 'IPv6 global multicast'],
    ['100::1', 'discard'],
    ['2001:2::1', 'IPv6 benchmarking'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['3fff::1', 'IPv6 documentation'],
    ['2001:10::1', 'ORCHID'],
    ['5f00::1', 'segment routing'],
    ['4000::1', 'outside global unicast'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(() =>
      targetUrl(`https://${address.includes(':') ? `[${address}]` : address}/`, STRICT),
    ).toThrow(TargetRefusal);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '2a00:1450:4001:80e::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
  ])('takes the public address %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('takes https://, and http:// only where allowed', () => {
    expect(() => targetUrl('https://hooks.example.com/in', STRICT)).not.toThrow();
    expect(() => targetUrl('http://hooks.example.com/in', STRICT)).toThrow(/https:\/\//);
    expect(() =>
      targetUrl('http://hooks.example.com/in', { ...STRICT, allowHttp: true }),
    ).not.toThrow();
    expect(() => targetUrl('ftp://hooks.example.com/in', STRICT)).toThrow(TargetRefusal);
    expect(() => targetUrl('not a url', STRICT)).toThrow(/absolute URL/);
    expect(() => targetUrl('https://user:pw@hooks.example.com/', STRICT)).toThrow(/password/);
  });

  describe('names, through a name server', () => {
    let nameServer: Socket;
    const resolver = (ms = 2000) => {
      const made = new TargetResolver(ms);
      made.setServers([`127.0.0.1:${nameServer.address().port}`]);
      return made;
    };
    beforeAll(async () => {
      nameServer = await startNameServer({
        'loopback.test': ['127.0.0.1'],
        'internal.test': ['10.0.0.7'],
        'mixed.test': ['93.184.215.14', 'fd00::1'],
        'compatible.test': ['::7f00:1'],
        'nat64.test': ['64:ff9b::a00:7'],
        'public.test': ['93.184.215.14', '2606:4700::1111'],
        'silent.test': 'silent',
      });
    });
    afterAll(() => nameServer.close());

    it.each([
      ['loopback.test', '127.0.0.1'],
      ['internal.test', '10.0.0.7'],
      ['mixed.test', 'fd00::1'],
      ['compatible.test', '127.0.0.1'],
      ['nat64.test', '10.0.0.7'],
    ])(
      'refuses %s, which resolves to %s, without saying to what, unless private networks are allowed',
      async (name, address) => {
        const refusal = checkTarget(`https://${name}/in`, STRICT, resolver());
        await expect(refusal).rejects.toThrow(
          /^The url's host resolves to a non-public address \(/,
        );
        await expect(refusal).rejects.not.toThrow(address);
        await expect(
          checkTarget(`https://${name}/in`, { ...STRICT, allowPrivateNetworks: true }, resolver()),
        ).resolves.toBeInstanceOf(URL);
      },
    );

    it('takes a name whose every address is public, and refuses one that does not resolve', async () => {
      await expect(checkTarget('https://public.test/in', STRICT, resolver())).resolves.toEqual(
        new URL('https://public.test/in'),
      );
      await expect(checkTarget('https://missing.test/in', STRICT, resolver())).rejects.toThrow(
        "The url's host missing.test does not resolve.",
      );
    });

    it('ends look-ups its name server never answers within their bound, holding up no file read or hash meanwhile', async () => {
      const started = Date.now();
      const settled: number[] = [];
      // More hanging look-ups than the thread pool has threads (4), each given 1 s.
      const refusals = Array.from({ length: 16 }, () =>
        checkTarget('https://silent.test/in', STRICT, resolver(1000)).then(
          () => {
            settled.push(Date.now() - started);
            return undefined;
          },
          (error: Error) => {
            settled.push(Date.now() - started);
            return error.message;
          },
        ),
      );
      // Work of the thread pool's: it ends in milliseconds unless the look-ups hold its threads, which
      // would keep it waiting their whole second (the margin is for a loaded machine).
      await Promise.all([
        readFile(__filename),
        ...Array.from({ length: 8 }, () => promisify(pbkdf2)('secret', 'salt', 1000, 32, 'sha256')),
      ]);
      const poolDone = Date.now() - started;
      expect({ poolDone, settled }).toEqual({ poolDone: expect.any(Number), settled: [] });
      expect(poolDone).toBeLessThan(700);
      expect(await Promise.all(refusals)).toEqual(
        Array.from({ length: 16 }, () => "The url's host silent.test does not resolve."),
      );
      expect(Math.max(...settled)).toBeLessThan(1000 + 1000);
    });

    it('refuses at delivery a connection to a name that resolves to a private address, without connecting', async () => {
      let connections = 0;
      const receiver: Server = createServer((_, response) => response.end());
      receiver.on('connection', () => connections++);
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const sender = new WebhookSender(
        { allowHttp: true, allowPrivateNetworks: false },
        2000,
        'test',
        resolver(),
      );
      try {
        const outcome = await sender.send({
          url: `http://loopback.test:${(receiver.address() as AddressInfo).port}/in`,
          secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
          eventId: 'event-1',
          body: '{}',
        });
        expect(outcome).toEqual({
          result: 'refused',
          reason: expect.stringMatching(
            /^The url's host resolves to a non-public address/,
          ) as unknown,
        });
        expect(outcome.reason).not.toContain('127.0.0.1');
        expect(connections).toBe(0);
      } finally {
        await sender.close();
        receiver.close();
      }
    });
  });
});
