import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  IsDefined,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  Length,
  Matches,
  Max,
  MaxDate,
  MaxLength,
  Min,
  MinDate,
  Validate,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { createApp } from '../../app.factory';
import { loadAppConfig } from '../../config/app-config';
import { DateField, DecimalField, IntField, ListField, TextField } from './wire-fields';
import { type WireClass, WireRecord, wireModelOf } from './wire-model';
import { checkWireModels, WireRulesError } from './wire-validation';

/*
 * class-validator's decorators on a wire DTO either work or stop the start: on a decimal its number
 * rules would refuse every value (the value is an exact decimal, not a number), and on any member
 * their rules would go unstated in the OpenAPI document. Each is refused when the service starts,
 * named with its class, its member and the field option to declare instead.
 */

enum Status {
  Pending = 'pending',
  Paid = 'paid',
}

enum Tier {
  Gold = 1,
  Silver = 2,
}

@WireRecord({ name: 'PlainSplit' })
class PlainSplitDto {
  @IntField() agent_id?: number | null;
}

/** What a new team member writes, following the NestJS documentation on a wire DTO. */
@WireRecord({ name: 'PlainCommission' })
class PlainCommissionDto {
  @Max(0.2) @Min(0) @DecimalField() rate?: number | null;
  @IsPositive() @DecimalField() amount?: number | null;
  @IsNumber({ maxDecimalPlaces: 4 }) @DecimalField() fee?: number | null;
  @Max(10) @IntField() tier?: number | null;
  @Min(0.5) @IntField() count?: number | null;
  @IsIn(['pending', 'approved', 'paid']) @TextField() status?: string | null;
  @IsEnum(Status) @TextField() state?: string | null;
  @IsEnum(Tier) @IntField() level?: number | null;
  @Length(3, 10) @TextField() reference?: string | null;
  @MaxLength(20) @TextField() note?: string | null;
  @Matches(/^[A-Z]+$/) @TextField() code?: string | null;
  @IsNotEmpty() @TextField() name?: string | null;
  @IsOptional() @TextField() comment?: string | null;
  @IsString() @TextField() label?: string | null;
  @IsEmail() @TextField() email?: string | null;
  @MinDate(new Date('2020-01-01T00:00:00Z')) @DateField() earned_on?: Date | null;
  @MaxDate(new Date('2030-01-01T00:00:00Z')) @DateField() paid_on?: Date | null;
  @ArrayMinSize(1) @ArrayMaxSize(3) @ListField(() => PlainSplitDto) splits?: PlainSplitDto[] | null;
  @ValidateNested({ each: true }) @ListField(() => PlainSplitDto) more_splits?:
    PlainSplitDto[] | null;
  @IsDefined() @IntField() agent_id?: number | null;
  @ValidateIf((record: { rate?: unknown }) => record.rate !== null) @IntField() when?:
    number | null;
  @Allow() @IntField() allowed?: number | null;
  /** No field decorator: the wire never binds it. */
  @IsInt() unbound?: number;
}

@ValidatorConstraint({ name: 'evenNumber' })
class EvenNumber implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'number' && value % 2 === 0;
  }
}

/** A module's own constraints run, unless written in a way wire validation does not run them. */
@WireRecord({ name: 'CustomRules' })
class CustomRulesDto {
  @Validate(EvenNumber) @IntField() even?: number | null;
  @ValidateBy({ name: 'upper', validator: { validate: (value) => value === 'UP' } }, { each: true })
  @TextField()
  each?: string | null;
  @ValidateBy(
    { name: 'upper', validator: { validate: (value) => value === 'UP' } },
    { validateIf: () => false },
  )
  @TextField()
  conditional?: string | null;
}

/** The problems reported for a model, one a member. */
function problemsOf(type: WireClass): string[] {
  try {
    checkWireModels([wireModelOf(type)]);
    return [];
  } catch (error) {
    if (!(error instanceof WireRulesError)) throw error;
    return [...error.problems];
  }
}

const NOT_WIRE =
  "class-validator rules on a wire DTO would go unstated in the OpenAPI document and answer in class-validator's voice, not the legacy's";
const EXACT_DECIMAL = (decorator: string) =>
  `a DecimalField's value is an exact decimal, not a number, so ${decorator} would refuse every value`;

describe('class-validator decorators on a wire DTO', () => {
  const problems = problemsOf(PlainCommissionDto);

  it.each([
    [
      'rate',
      `@Max(0.2) is not a wire rule (${EXACT_DECIMAL('@Max(0.2)')}). Use DecimalField({ exactMax: 0.2 }) instead.`,
    ],
    [
      'rate',
      `@Min(0) is not a wire rule (${EXACT_DECIMAL('@Min(0)')}). Use DecimalField({ exactMin: 0 }) instead.`,
    ],
    [
      'amount',
      `@IsPositive() is not a wire rule (${EXACT_DECIMAL('@IsPositive()')}). Use DecimalField({ greaterThan: 0 }) instead.`,
    ],
    [
      'fee',
      `@IsNumber({ maxDecimalPlaces: 4 }) is not a wire rule (${EXACT_DECIMAL('@IsNumber({ maxDecimalPlaces: 4 })')}). Use DecimalField({ scale: 4 }) instead.`,
    ],
    ['tier', `@Max(10) is not a wire rule (${NOT_WIRE}). Use IntField({ max: 10 }) instead.`],
    ['count', `@Min(0.5) is not a wire rule (${NOT_WIRE}). Use IntField({ min: 1 }) instead.`],
    [
      'status',
      `@IsIn(['pending', 'approved', 'paid']) is not a wire rule (${NOT_WIRE}). Use TextField({ enum: ['pending', 'approved', 'paid'] }) instead.`,
    ],
    [
      'state',
      `@IsEnum({ Pending: 'pending', Paid: 'paid' }) is not a wire rule (${NOT_WIRE}). Use TextField({ enum: ['pending', 'paid'] }) instead.`,
    ],
    [
      'level',
      `@IsEnum({ Gold: 1, Silver: 2 }) is not a wire rule (${NOT_WIRE}). Use IntField({ enum: [1, 2] }) instead.`,
    ],
    [
      'reference',
      `@Length(3, 10) is not a wire rule (${NOT_WIRE}). Use TextField({ minLength: 3, maxLength: 10 }) instead.`,
    ],
    [
      'note',
      `@MaxLength(20) is not a wire rule (${NOT_WIRE}). Use TextField({ maxLength: 20 }) instead.`,
    ],
    [
      'code',
      `@Matches(/^[A-Z]+$/) is not a wire rule (${NOT_WIRE}). Use TextField({ pattern: /^[A-Z]+$/ }) instead.`,
    ],
    [
      'name',
      `@IsNotEmpty() is not a wire rule (${NOT_WIRE}). Use TextField({ required: true }) instead.`,
    ],
    [
      'comment',
      `@IsOptional() is not a wire rule (${NOT_WIRE}). Remove it: a wire field is optional unless declared with { required: true }.`,
    ],
    [
      'label',
      `@IsString() is not a wire rule (${NOT_WIRE}). Remove it: TextField already refuses a value of another type, in the legacy voice.`,
    ],
    [
      'email',
      `@IsEmail() is not a wire rule (${NOT_WIRE}). No TextField option states this rule: use the one that does`,
    ],
    [
      'earned_on',
      `@MinDate(new Date('2020-01-01T00:00:00.000Z')) is not a wire rule (${NOT_WIRE}). Use DateField({ earliest: new Date('2020-01-01T00:00:00.000Z') }) instead.`,
    ],
    [
      'paid_on',
      `@MaxDate(new Date('2030-01-01T00:00:00.000Z')) is not a wire rule (${NOT_WIRE}). Use DateField({ latest: new Date('2030-01-01T00:00:00.000Z') }) instead.`,
    ],
    [
      'splits',
      `@ArrayMinSize(1) is not a wire rule (${NOT_WIRE}). Use ListField(() => PlainSplitDto, { minItems: 1 }) instead.`,
    ],
    [
      'splits',
      `@ArrayMaxSize(3) is not a wire rule (${NOT_WIRE}). Use ListField(() => PlainSplitDto, { maxItems: 3 }) instead.`,
    ],
    [
      'more_splits',
      `@ValidateNested() is not a wire rule (${NOT_WIRE}). Remove it: ListField binds and validates its items by their own model.`,
    ],
    [
      'agent_id',
      `@IsDefined() is not a wire rule (${NOT_WIRE}). Use IntField({ required: true }) instead.`,
    ],
    [
      'when',
      `@ValidateIf() is not a wire rule (${NOT_WIRE}). Remove it: wire rules hold unconditionally; check the condition in the service.`,
    ],
    [
      'allowed',
      `@Allow() is not a wire rule (${NOT_WIRE}). Remove it: IntField already refuses a value of another type, in the legacy voice.`,
    ],
    [
      'unbound',
      '@IsInt() is on a member no field decorator declares: a wire model reads and writes only the members its field decorators declare',
    ],
  ])('refuses %s: %s', (member, problem) => {
    expect(problems).toContainEqual(
      expect.stringContaining(`PlainCommissionDto.${member}: ${problem}`),
    );
  });

  it('refuses each of them, and nothing else', () => {
    expect(problems).toHaveLength(25);
  });

  it('runs a module constraint of its own, unless with each or a condition', () => {
    expect(problemsOf(CustomRulesDto)).toEqual([
      'CustomRulesDto.each: @Upper() with each: wire validation runs a rule on the member.',
      'CustomRulesDto.conditional: @Upper() with validateIf: wire rules hold unconditionally; check the condition in the service.',
    ]);
  });

  it('stops the service from starting, with every problem in its message', async () => {
    const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
    const started = createApp(config, { logger: false });
    await expect(started).rejects.toThrow(WireRulesError);
    await expect(started).rejects.toThrow(
      'PlainCommissionDto.rate: @Max(0.2) is not a wire rule (a DecimalField',
    );
    await expect(started).rejects.toThrow('Use DecimalField({ exactMax: 0.2 }) instead.');
    await expect(started).rejects.toThrow('CustomRulesDto.each');
  });

  it('leaves alone a class that is no wire model', () => {
    // A plain NestJS DTO is validated by ValidationPipe, as the NestJS documentation has it.
    class PlainDto {
      @Max(0.2) rate?: number;
    }
    expect(() => wireModelOf(PlainDto)).toThrow('PlainDto is not declared with @WireRecord');
    expect(() => checkWireModels([wireModelOf(PlainSplitDto)])).not.toThrow();
  });
});
