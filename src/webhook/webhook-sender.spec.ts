import { Webhook } from 'standardwebhooks';
import { signDelivery } from './webhook-sender';

describe('signDelivery, the Standard Webhooks v1 signature of a delivery', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const timestamp = new Date('2026-12-06T20:41:07.912Z');

  it.each([
    ['a CloudEvent', '{"specversion":"1.0","id":"e1","data":{"brokername":"Lourdes"}}'],
    ['text past ASCII', '{"brokername":"Niño Ñández — 東京 🏠"}'],
    ['an empty body', ''],
  ])(
    'signs %s exactly as the standardwebhooks package does, and its verify takes it',
    (_, body) => {
      const signature = signDelivery(secret, 'msg_2f1', timestamp, body);
      expect(signature).toBe(new Webhook(secret).sign('msg_2f1', timestamp, body));
      const headers = {
        'webhook-id': 'msg_2f1',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': signDelivery(secret, 'msg_2f1', new Date(), body),
      };
      expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    },
  );

  it('signs with the key the secret names: another secret does not verify', () => {
    const other = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    expect(signDelivery(secret, 'msg_2f1', timestamp, '{}')).not.toBe(
      signDelivery(other, 'msg_2f1', timestamp, '{}'),
    );
  });
});
