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
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
    expect(() =>
      targetUrl(`https://${address.includes(':') ? `[${address}]` : address}/`, STRICT),
    ).toThrow(TargetRefusal);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111'])(
    'takes the public address %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

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
