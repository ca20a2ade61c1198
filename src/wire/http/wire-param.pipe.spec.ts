import { type ArgumentMetadata } from '@nestjs/common';
import { DecimalField, IntField, TextField } from '../model/wire-fields';
import { RequestValidationError } from '../model/wire-errors';
import { WireRecord } from '../model/wire-model';
import { WireParamPipe } from './wire-param.pipe';

@WireRecord({ name: 'ParamPipeRecord' })
class ParamPipeRecordDto {
  @IntField({ required: true, min: 1 }) record_id?: number | null;
  @TextField({ required: true, maxLength: 8, pattern: /^[A-Z]+$/ }) record_code?: string | null;
  @DecimalField() amount?: number | null;
}

const pipe = new WireParamPipe(ParamPipeRecordDto);
const param = (data: string): ArgumentMetadata => ({ type: 'param', data });

/** What the pipe refuses `value` with: the ModelState of its 400. */
function refusal(value: string, name: string): unknown {
  try {
    pipe.transform(value, param(name));
  } catch (error) {
    if (error instanceof RequestValidationError) return error.modelState;
    throw error;
  }
  throw new Error(`${name} ${value} was taken`);
}

describe('WireParamPipe', () => {
  it('reads a parameter its member takes, as the member holds it', () => {
    expect(pipe.transform('7', param('record_id'))).toBe(7);
    expect(pipe.transform('ABC', param('record_code'))).toBe('ABC');
  });

  it.each([
    ['0', 'record_id', 'The field record_id must be at least 1.'],
    ['abc', 'record_id', "The value 'abc' is not valid for record_id."],
    ['2147483648', 'record_id', "The value '2147483648' is not valid for record_id."],
    ['abc', 'record_code', "The field record_code must match the regular expression '^[A-Z]+$'."],
    [
      'ABCDEFGHI',
      'record_code',
      'The field record_code must be a string with a maximum length of 8.',
    ],
  ])('refuses %j for %s by the member’s rule, keyed by the parameter', (value, name, message) => {
    expect(refusal(value, name)).toEqual({ [name]: [message] });
  });

  it('is no pipe for a member that is not an int or text, or that the record lacks', () => {
    expect(() => pipe.transform('1', param('amount'))).toThrow(/int or text member/);
    expect(() => pipe.transform('1', param('other_id'))).toThrow(/not the parameter other_id/);
  });
});
