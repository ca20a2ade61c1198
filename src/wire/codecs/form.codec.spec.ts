import { TransactionDto } from '../../transaction/dto/transaction.dto';
import { FormReader, MAX_FORM_PARAMETERS } from './form.codec';
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

  it('refuses more than the parameter limit', () => {
    expect(() => decode(new Array(MAX_FORM_PARAMETERS + 1).fill('a=1').join('&'))).toThrow(
      MalformedBodyError,
    );
    expect(() => decode(new Array(MAX_FORM_PARAMETERS).fill('a=1').join('&'))).not.toThrow();
  });

  it('refuses keys nested past any member, and binds nothing from prototype-named keys', () => {
    expect(() => decode(`a${'[x]'.repeat(20)}=1`)).toThrow(MalformedBodyError);
    const bound = decode(
      '__proto__[polluted]=yes&constructor[prototype][polluted]=yes&toString=1&financetype=Cash',
    );
    expect(bound).toEqual({ financetype: 'Cash' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
