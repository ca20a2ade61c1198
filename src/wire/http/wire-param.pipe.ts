import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { RequestValidationError } from '../model/wire-errors';
import { type WireClass, wireModelOf } from '../model/wire-model';
import { wireViolations } from '../model/wire-validation';
import { Int32ParamPipe } from './int32-param.pipe';

/**
 * A route parameter read as the member of a record it names: `@Param('commission_code', new
 * WireParamPipe(CommissionDto))`. An int member's text is read as Int32ParamPipe reads it, then the
 * member's own rules apply (its range, length, pattern), so that a key in the path is held to what
 * the record's body would be held to; a value that breaks one is refused (400) keyed by the
 * parameter, with the member's messages.
 */
@Injectable()
export class WireParamPipe implements PipeTransform<string, number | string> {
  constructor(private readonly type: WireClass) {}

  transform(value: string, metadata: ArgumentMetadata): number | string {
    const name = metadata.data;
    const member = wireModelOf(this.type).members.find((candidate) => candidate.name === name);
    if (!name || !member || (member.kind !== 'int' && member.kind !== 'string'))
      throw new Error(
        `WireParamPipe reads an int or text member of ${this.type.name}, not the parameter ${name}.`,
      );
    const read = member.kind === 'int' ? new Int32ParamPipe().transform(value, metadata) : value;
    const messages = wireViolations(this.type, { [name]: read }, 'parameter')
      .filter((violation) => violation.member === member)
      .map((violation) => violation.message);
    if (messages.length > 0) throw new RequestValidationError({ [name]: messages });
    return read;
  }
}
