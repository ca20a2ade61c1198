import { TransactionDto } from '../../transaction/dto/transaction.dto';
import { FormReader } from './form.codec';
import { MalformedBodyError } from '../model/wire-errors';
import { wireModelOf } from '../model/wire-model';

const form = new FormReader();
const decode = (text: string) => form.decode(text, wireModelOf(TransactionDto));

describe('FormReader', () => {
  it('matches keys case-insensitively, takes the first of repeated keys, reads empty values as null', () => {
    expect(
      decode('FINANCETYPE=Cash&brokerid=1&brokerid=2&BrokerName=&unknown=x&clientname=Ana+Cruz%21'),
    ).toEqual({
      financetype: 'Cash',
      brokerid: 1,
      brokername: null,
      clientname: 'Ana Cruz!',
    });
  });

  it('reads white space alone as null but for text, as the legacy form binder did', () => {
    expect(
      decode(
        'brokerid=+&interestrate=%09&locked=%C2%A0&reservationdate=%0D%0A&clientname=+&' +
          'requirements[0][requirement_id]=%E3%80%80',
      ),
    ).toEqual({
      brokerid: null,
      interestrate: null,
      locked: null,
      reservationdate: null,
      clientname: ' ',
      requirements: [{ requirement_id: null }],
    });
  });

  it('binds lists from both index syntaxes, from 0 up to the first gap', () => {
    expect(
      decode(
        'requirements[0][requirement_id]=1&requirements[0].SUBMITTED=true&requirements[1].requirement_id=2' +
          '&requirements[3][requirement_id]=4&requirements[00][requirement_id]=9',
      ),
    ).toEqual({
      requirements: [{ requirement_id: 1, submitted: true }, { requirement_id: 2 }],
    });
  });

  it('reads any number of pairs, as the legacy did: the body limit bounds them', () => {
    const checklist = Array.from(
      { length: 3000 },
      (_, index) => `requirements[${index}][requirement_id]=${index + 1}`,
    );
    expect(decode(checklist.join('&')).requirements).toHaveLength(3000);
  });

  it.each([
    [
      'jQuery brackets on scalars',
      'transaction_id[]=1004&financetype[]=Cash',
      { transaction_id: 1004, financetype: 'Cash' },
    ],
    [
      'the first of repeated bracket keys',
      'brokername[]=Php2&brokername[]=Other&BROKERNAME=x',
      { brokername: 'Php2' },
    ],
    ['[] anywhere', '[]brokername=a&clientname[][]=b', { brokername: 'a', clientname: 'b' }],
    [
      'a named bracket as a dotted member of nothing',
      'brokername[x]=a&brokername.y=b&brokername[0]=c',
      {},
    ],
    [
      'an item member in brackets after brackets',
      'requirements[0][requirement_id][]=5',
      { requirements: [{ requirement_id: 5 }] },
    ],
    [
      'an item addressed by a deeper key',
      'requirements[0].requirement_id.x=1&requirements[1].requirement_id=2',
      { requirements: [{}, { requirement_id: 2 }] },
    ],
    [
      'an item addressed by its value alone',
      'requirements[0]=x&requirements[1][requirement_id]=2',
      { requirements: [{}, { requirement_id: 2 }] },
    ],
    [
      'a key running on after the index',
      'requirements[0]x=1&requirements[1].requirement_id=2',
      { requirements: [] },
    ],
    [
      'an index written otherwise',
      'requirements[ 0][requirement_id]=1&requirements[0x][requirement_id]=2&requirements[][requirement_id]=3',
      { requirements: [] },
    ],
    [
      'a key nested past any member',
      `a${'[x]'.repeat(20)}=1&financetype=Cash`,
      { financetype: 'Cash' },
    ],
    ['a key without = as empty', 'brokername&brokerid', { brokername: null, brokerid: null }],
    ['+ and %20 in keys', 'broker+name=a&broker%20name=b&%62rokername=c', { brokername: 'c' }],
  ])('binds %s as Web API did', (_, text, expected) => {
    expect(decode(text)).toEqual(expected);
  });

  it('refuses a form with a [ left open in any key, as the legacy did', () => {
    expect(() => decode('financetype=Cash&x[=1')).toThrow(MalformedBodyError);
    expect(() => decode('requirements[0][x=1')).toThrow(MalformedBodyError);
  });

  it('reads query strings by their keys as sent', () => {
    const query = new FormReader(false);
    expect(
      query.decode('brokername[]=a&x[=1&financetype=Cash', wireModelOf(TransactionDto)),
    ).toEqual({
      financetype: 'Cash',
    });
  });

  it('binds nothing from prototype-named keys', () => {
    const bound = decode(
      '__proto__[polluted]=yes&constructor[prototype][polluted]=yes&toString=1&financetype=Cash',
    );
    expect(bound).toEqual({ financetype: 'Cash' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('FormReader.decodePlain', () => {
  const decodePlain = (text: string) => form.decodePlain(text);

  it('keeps names as sent, reads repeated keys and [] as lists, records and lists at any depth', () => {
    expect(
      decodePlain(
        'n=5&N=6&tags=a&tags=b&ids[]=1&ids[]=2&owner[name]=Ada&owner.city=Paris' +
          '&items[1].name=nut&items[0][name]=bolt&items[0][parts][0]=x&empty=',
      ),
    ).toEqual({
      n: '5',
      N: '6',
      tags: ['a', 'b'],
      ids: ['1', '2'],
      owner: { name: 'Ada', city: 'Paris' },
      items: [{ name: 'bolt', parts: ['x'] }, { name: 'nut' }],
      empty: '',
    });
  });

  it('ignores a key that contradicts an earlier one', () => {
    expect(decodePlain('a=1&a[b]=2&c[0]=3&c[d]=4&c=5&e[f]=6&e[]=7')).toEqual({
      a: '1',
      c: ['3'],
      e: { f: '6' },
    });
  });

  it('refuses keys nested too deeply, and adds nothing from prototype-named keys', () => {
    expect(() => decodePlain(`a${'[x]'.repeat(20)}=1`)).toThrow(MalformedBodyError);
    const plain = decodePlain('__proto__[polluted]=yes&a[__proto__][polluted]=yes&n=1');
    expect(plain).toEqual({ n: '1' });
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
