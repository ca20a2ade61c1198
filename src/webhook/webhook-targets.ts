import ipaddr from 'ipaddr.js';
import { type LookupAddress, type LookupOptions, promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';

/** Where a subscription may POST: its schemes, and whether private networks may be reached. */
export interface TargetRules {
  readonly allowHttp: boolean;
  readonly allowPrivateNetworks: boolean;
}

/** The code of a connection the address check refused, as Node.js codes a refused one. */
export const TARGET_REFUSED = 'EWEBHOOKTARGET';

/** Why a URL is no webhook target; its message says so to the subscriber's owner. */
export class TargetRefusal extends Error {
  readonly code = TARGET_REFUSED;
}

/** IPv6's global unicast space (2000::/3): every IPv6 address outside it is refused. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix: the IPv4 address in its last 32 bits is the one reached. */
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * Whether an address is on the public internet, by an allow-list: an IPv4 address in ipaddr.js's
 * `unicast` range, which leaves out loopback (127/8), private (10/8, 172.16/12, 192.168/16),
 * link-local (169.254/16, the cloud metadata address 169.254.169.254 among them), carrier-grade NAT
 * (100.64/10), multicast, broadcast, unspecified, documentation, benchmarking and reserved ranges;
 * an IPv6 address in `unicast` and in 2000::/3, which leaves out ::1, ::, IPv4-compatible (::a.b.c.d),
 * fe80::/10, fec0::/10, fc00::/7, ff00::/8, and within 2000::/3 6to4, Teredo, documentation,
 * benchmarking and the other special ranges. An IPv4-mapped (::ffff:a.b.c.d) or NAT64
 * (64:ff9b::a.b.c.d) address is judged as the IPv4 address it reaches.
 */
export function isPublicAddress(address: string): boolean {
  switch (isIP(address)) {
    case 4:
      return ipaddr.IPv4.parse(address).range() === 'unicast';
    case 6: {
      const v6 = ipv6Of(address);
      if (!v6) return false;
      if (v6.isIPv4MappedAddress()) return isPublicAddress(v6.toIPv4Address().toString());
      if (v6.match(NAT64))
        return isPublicAddress(ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString());
      return v6.range() === 'unicast' && v6.match(GLOBAL_UNICAST);
    }
    default:
      return false;
  }
}

/**
 * An IPv6 address as the one connected to. ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`, another
 * address, so it reads it as the URL parser writes it, in hex (`::7f00:1`); undefined for a form the
 * URL parser refuses (a zone id).
 */
function ipv6Of(address: string): ipaddr.IPv6 | undefined {
  const url = `http://[${address}]/`;
  return URL.canParse(url) ? ipaddr.IPv6.parse(hostOf(new URL(url))) : undefined;
}

/** A URL's host as an address or a name: without IPv6's brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The URL, parsed, when its form may be a target: https:// (http:// where allowed), no credentials,
 * a host; and, when private networks are refused, no private address written as its host.
 * TargetRefusal otherwise. What a name resolves to is checked by `checkTarget` and `checkedLookup`.
 */
export function targetUrl(text: string, rules: TargetRules): URL {
  if (!URL.canParse(text)) throw new TargetRefusal('The url is not an absolute URL.');
  const url = new URL(text);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttp))
    throw new TargetRefusal(
      rules.allowHttp
        ? 'The url must be https:// or http://.'
        : 'The url must be https:// (http:// is taken only where WEBHOOKS_ALLOW_HTTP is set).',
    );
  if (url.username !== '' || url.password !== '')
    throw new TargetRefusal('The url must carry no user name or password.');
  if (url.hash !== '') throw new TargetRefusal('The url must have no fragment (#…).');
  const host = hostOf(url);
  if (!rules.allowPrivateNetworks && isIP(host) !== 0 && !isPublicAddress(host))
    throw new TargetRefusal(
      "The url's host is a non-public address (loopback, private, link-local or reserved), which a webhook may not reach.",
    );
  return url;
}

/**
 * The refusal of a name that resolves to a non-public address. It does not say which: the address
 * would tell whoever registers a name what the service's internal names resolve to.
 */
const resolvesPrivate = () =>
  new TargetRefusal(
    "The url's host resolves to a non-public address (loopback, private, link-local or reserved), which a webhook may not reach.",
  );

/** How many times a look-up asks each name server before it gives up on it. */
const DNS_TRIES = 2;

/**
 * The name look-ups of the address checks, at registration and at every connection. They ask the
 * system's name servers over c-ares's own sockets: `dns.lookup` would run getaddrinfo, which holds
 * a thread of the pool (four by default) for as long as a look-up lasts, so that a few names whose
 * servers never answer would stall every file read, hash and compression of the service. The hosts
 * file is not read: what is checked is what the name servers give, and the connection is made to it.
 * Each look-up asks each server DNS_TRIES times, and ends after `ms` whatever it waits for.
 */
export class TargetResolver extends dnsPromises.Resolver {
  constructor(private readonly ms: number) {
    // c-ares waits longer on each try (about 3 timeouts for 2): with one server, it gives up first.
    super({ timeout: Math.max(1, Math.floor(ms / (2 * DNS_TRIES))), tries: DNS_TRIES });
  }

  /** Every IPv4 and IPv6 address of a name; rejected when it has none, or none within `ms`. */
  async addresses(host: string): Promise<LookupAddress[]> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not resolved within ${this.ms} ms`)), this.ms);
    });
    try {
      const [v4, v6] = await Promise.race([
        Promise.allSettled([this.resolve4(host), this.resolve6(host)]),
        deadline,
      ]);
      const addresses = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
      ];
      if (addresses.length === 0) throw (v4 as PromiseRejectedResult).reason;
      return addresses;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Checks a URL as a subscription names it: its form, then every address its host resolves to, each
 * of which must be public (unless private networks are allowed). TargetRefusal otherwise, a name
 * that does not resolve in time included. Deliveries check again as they connect
 * (`checkedLookup`): a name may resolve elsewhere later.
 */
export async function checkTarget(
  text: string,
  rules: TargetRules,
  resolver: TargetResolver,
): Promise<URL> {
  const url = targetUrl(text, rules);
  const host = hostOf(url);
  if (rules.allowPrivateNetworks || isIP(host) !== 0) return url;
  let addresses: LookupAddress[];
  try {
    addresses = await resolver.addresses(host);
  } catch {
    throw new TargetRefusal(`The url's host ${host} does not resolve.`);
  }
  if (!addresses.every(({ address }) => isPublicAddress(address))) throw resolvesPrivate();
  return url;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for the HTTP client's connections, through `resolver`: it fails the connection
 * (TargetRefusal) when any address is not public, so that a name that now resolves to a private
 * address is never connected to. IP literals are not looked up: `targetUrl` checks them.
 */
export function checkedLookup(resolver: TargetResolver) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolver.addresses(hostname).then(
      (addresses) => {
        if (!addresses.every(({ address }) => isPublicAddress(address)))
          return callback(resolvesPrivate(), []);
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
