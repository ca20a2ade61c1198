import { checkTarget, isPublicAddress, TargetRefusal, targetUrl } from './webhook-targets';

const STRICT = { allowHttp: false, allowPrivateNetworks: false };

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

  it('refuses a name that resolves to a private address without saying which, unless private networks are allowed', async () => {
    const refusal = checkTarget('https://localhost/in', STRICT, 5000);
    await expect(refusal).rejects.toThrow(/^The url's host resolves to a non-public address/);
    await expect(refusal).rejects.not.toThrow(/127\.0\.0\.1|::1/);
    await expect(
      checkTarget('https://localhost/in', { ...STRICT, allowPrivateNetworks: true }, 5000),
    ).resolves.toBeInstanceOf(URL);
  });
});
