import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import fc from 'fast-check';
import { type IncomingMessage } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { LEGACY_EXCHANGES } from '../../../test/parity/recorded';
import {
  type BodyFormat,
  bodyBytes,
  bodyFor,
  DATA_CONTRACT_NAMESPACE,
} from '../../../test/support/body-arbitraries';
import { TransactionDto } from '../../transaction/dto/transaction.dto';
import { UpdateAgentsDto } from '../../transaction/dto/update-agents.dto';
import { FormReader } from '../codecs/form.codec';
import { JsonCodec } from '../codecs/json.codec';
import { type WireReader } from '../codecs/wire-codec';
import { XmlCodec } from '../codecs/xml.codec';
import { RawWireBody, requestContentType } from '../http/wire-body';
import { WireFormats } from '../http/wire-negotiation';
import { ExactDecimal } from '../values/exact-decimal';
import { UnreadableValue } from '../values/unreadable-value';
import { runSteps } from './steps';
import { describeValue } from './wire-fields';
import { MalformedBodyError, type ModelState, RequestValidationError } from './wire-errors';
import { type BoundRecord, type WireClass, type WireModel, wireModelOf } from './wire-model';
import { toValidatedDto } from './wire-validation';

/*
 * toValidatedDto runs the class-validator rules the DTO decorators declare on the bound record itself.
 * Before, class-transformer built the DTO instances and class-validator's validateSync checked each
 * record; that path is kept here as the oracle, and every body of the fuzzing corpus, and every body
 * the legacy service was recorded answering, must get the same outcome from both: the same DTO, or
 * the same ModelState (keys, messages, order), but for the one difference quotingSentListValues
 * spells out.
 */

// The oracle: validation as it ran on class instances ----------------------------------------------

function collectMessages(
  errors: readonly ValidationError[],
  path: string,
  root: string,
  into: ModelState,
): void {
  for (const error of errors) {
    if (!error.constraints) continue;
    const unreadable = error.value instanceof UnreadableValue ? error.value : undefined;
    const key = `${path}.${unreadable?.sentName ?? error.property}`;
    const messages = Object.values(error.constraints);
    into[key] = messages;
    if (unreadable?.lostName !== undefined) {
      const lost = `${path}.${unreadable.lostName}`;
      into[lost] = [...(into[lost] ?? []), ...messages];
    } else if (unreadable?.failsRecord) {
      const lists = [...path.matchAll(/\[\d+\]/g)].map((index) => path.slice(0, index.index));
      for (const enclosing of [root, ...lists])
        into[enclosing] = [...(into[enclosing] ?? []), ...messages];
    }
  }
}

function validateInstance(
  record: object,
  model: WireModel,
  path: string,
  root: string,
  into: ModelState,
  unreadableItems: ReadonlyMap<string, UnreadableValue>,
): void {
  const errors = validateSync(record, { stopAtFirstError: true, forbidUnknownValues: false });
  collectMessages(errors, path, root, into);
  for (const member of model.members) {
    const items = (record as Record<string, unknown>)[member.name];
    if (member.kind !== 'list' || !Array.isArray(items) || `${path}.${member.name}` in into)
      continue;
    const itemModel = wireModelOf(member.item());
    items.forEach((item: unknown, index) => {
      const itemPath = `${path}.${member.name}[${index}]`;
      const unreadable = unreadableItems.get(itemPath);
      if (unreadable)
        into[itemPath] = [
          `The value '${describeValue(unreadable)}' is not valid for ${member.name}.`,
        ];
      else if (item !== null)
        validateInstance(item as object, itemModel, itemPath, root, into, unreadableItems);
    });
  }
}

function settleDecimals(model: WireModel, record: Record<string, unknown>): void {
  for (const member of model.members) {
    const value = record[member.name];
    if (value instanceof ExactDecimal) record[member.name] = value.toNumber();
    else if (member.kind === 'list' && Array.isArray(value)) {
      const itemModel = wireModelOf(member.item());
      for (const item of value as unknown[])
        if (item !== null) settleDecimals(itemModel, item as Record<string, unknown>);
    }
  }
}

/**
 * Takes out of the bound record's lists the items its codec could not read as records (a number, a
 * string), by their paths, leaving null in their place: class-transformer would rebuild them as
 * records. The oracle reports each at its index, as the legacy did.
 */
function takeUnreadableItems(
  model: WireModel,
  record: BoundRecord,
  path: string,
  into: Map<string, UnreadableValue>,
): BoundRecord {
  for (const member of model.members) {
    const items = record[member.name];
    if (member.kind !== 'list' || !Array.isArray(items)) continue;
    const itemModel = wireModelOf(member.item());
    record[member.name] = items.map((item: unknown, index) => {
      const itemPath = `${path}.${member.name}[${index}]`;
      if (item instanceof UnreadableValue) into.set(itemPath, item);
      if (item === null || typeof item !== 'object' || item instanceof UnreadableValue) return null;
      return takeUnreadableItems(itemModel, item as BoundRecord, itemPath, into);
    });
  }
  return record;
}

/** toValidatedDto as it was: class-transformer builds the instances, class-validator checks each. */
function classValidatorDto<T extends object>(
  type: WireClass<T>,
  bound: BoundRecord,
  parameterName: string,
): T {
  const model = wireModelOf(type);
  const unreadableItems = new Map<string, UnreadableValue>();
  const instance = plainToInstance(
    type,
    takeUnreadableItems(model, bound, parameterName, unreadableItems),
  );
  const modelState: ModelState = {};
  validateInstance(instance, model, parameterName, parameterName, modelState, unreadableItems);
  if (Object.keys(modelState).length > 0) throw new RequestValidationError(modelState);
  settleDecimals(model, instance as Record<string, unknown>);
  return instance;
}

// Comparing the two -------------------------------------------------------------------------------

const json = new JsonCodec();
const xml = new XmlCodec(DATA_CONTRACT_NAMESPACE);
const form = new FormReader();
const READERS: Record<BodyFormat, WireReader> = { json, xml, form };
const MODELS: readonly WireClass[] = [UpdateAgentsDto, TransactionDto];

/** A DTO as data: its own members, nested records and lists alike, whatever classes built them. */
function plainData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainData);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [name, plainData(member)]),
  );
}

type Outcome =
  { readonly accepted: unknown } | { readonly refused: readonly [string, readonly string[]][] };

function outcomeOf(validate: () => object): Outcome {
  try {
    return { accepted: plainData(validate()) };
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    // Entries, not the object: the order of the keys is part of the answer.
    return { refused: Object.entries(error.modelState) };
  }
}

/** The body read and bound as the body pipe reads it; `undefined` when it is malformed. */
function bind(
  reader: WireReader,
  bytes: Buffer,
  charset: string | undefined,
  model: WireModel,
): BoundRecord | undefined {
  try {
    const { text, encoding } = new RawWireBody(reader, bytes, charset).decode();
    return reader.decodeSteps
      ? runSteps(reader.decodeSteps(text, model, encoding))
      : reader.decode(text, model, encoding);
  } catch (error) {
    if (error instanceof MalformedBodyError) return undefined;
    throw error;
  }
}

/**
 * The one difference between the paths, kept in sight: JSON binds a list member holding something
 * other than a list (`"requirements":"x"`) as an UnreadableValue, to quote what was sent, keyed as
 * Json.NET's path named it (the member as sent, or an object's first member). The old path lost it:
 * class-transformer rebuilt it as the member's item class (its `@Type`), so the message quoted `{…}`
 * under the member's name; validation without instances quotes the value sent. Here, the
 * class-validator outcome with those messages and keys as sent: all else must be equal.
 */
function quotingSentListValues(model: WireModel, bound: BoundRecord, outcome: Outcome): Outcome {
  if (!('refused' in outcome)) return outcome;
  const quoted = new Map(
    model.members.flatMap((member): [string, [string, string, string]][] => {
      const value = bound[member.name];
      if (member.kind !== 'list' || !(value instanceof UnreadableValue)) return [];
      const message = (shown: string) => `The value '${shown}' is not valid for ${member.name}.`;
      return [
        [
          `${model.parameterName}.${member.name}`,
          [
            message('{…}'),
            message(describeValue(value)),
            `${model.parameterName}.${value.sentName ?? member.name}`,
          ],
        ],
      ];
    }),
  );
  return {
    refused: outcome.refused.map(([key, messages]) => {
      const [asBefore, sent, sentKey = key] = quoted.get(key) ?? [];
      return [sentKey, messages.map((message) => (message === asBefore ? sent! : message))];
    }),
  };
}

/** How often each outcome came up, so that a run that never accepts or never refuses shows. */
interface Tally {
  accepted: number;
  refused: number;
  malformed: number;
  /** Refusals where the messages differ as quotingSentListValues says. */
  quotingSentListValue: number;
}
const newTally = (): Tally => ({ accepted: 0, refused: 0, malformed: 0, quotingSentListValue: 0 });

/**
 * For each model the body binds to, the outcome of the fast path and what it should be: the outcome
 * of class-transformer and class-validator, with the difference above. The body is bound once for
 * each, since validation settles a record's decimals in place.
 */
function outcomesOf(
  reader: WireReader,
  bytes: Buffer,
  charset: string | undefined,
  tally: Tally,
): { model: string; fastPath: Outcome; expected: Outcome }[] {
  return MODELS.flatMap((type) => {
    const model = wireModelOf(type);
    const forFastPath = bind(reader, bytes, charset, model);
    if (forFastPath === undefined) {
      tally.malformed += 1;
      return [];
    }
    const forClassValidator = bind(reader, bytes, charset, model)!;
    const classValidator = outcomeOf(() =>
      classValidatorDto(type, forClassValidator, model.parameterName),
    );
    const expected = quotingSentListValues(model, forFastPath, classValidator);
    const fastPath = outcomeOf(() => toValidatedDto(type, forFastPath, model.parameterName));
    tally['accepted' in fastPath ? 'accepted' : 'refused'] += 1;
    if (!isDeepStrictEqual(expected, classValidator)) tally.quotingSentListValue += 1;
    return [{ model: type.name, fastPath, expected }];
  });
}

// The properties ----------------------------------------------------------------------------------

/** Per format: enough bodies to reach the rare shapes, few enough to stay a unit spec. */
const RUNS_PER_FORMAT = 2000;
/** As the fuzzing suite sends them: the ids it seeds, its body limit. */
const CORPUS = { transactionIds: [1001, 1002, 1003, 1004], bodyLimitBytes: 64 * 1024 };

describe('validation without class instances', () => {
  it.each<BodyFormat>(['json', 'xml', 'form'])(
    'agrees with class-transformer and class-validator on every %s body of the fuzzing corpus',
    (format) => {
      const tally = newTally();
      fc.assert(
        fc.property(bodyFor(format, CORPUS), (body) => {
          const bytes = bodyBytes(body);
          // Without a body, the pipe refuses before anything is read.
          if (bytes.length === 0) return;
          for (const { fastPath, expected } of outcomesOf(READERS[format], bytes, undefined, tally))
            expect(fastPath).toStrictEqual(expected);
        }),
        { numRuns: RUNS_PER_FORMAT },
      );
      // Both ways out were taken, many times.
      expect(tally.accepted).toBeGreaterThan(RUNS_PER_FORMAT / 20);
      expect(tally.refused).toBeGreaterThan(RUNS_PER_FORMAT / 20);
    },
  );

  it.each([
    ['JSON.parse', '{"transaction_id":1001,"requirements":[0]}'],
    // A numeral JSON.parse cannot read exactly: the JSON reader keeps each numeral as it was written.
    [
      'the JSON reader',
      '{"transaction_id":1001,"discount":7.030330553681084e-309,"requirements":[0]}',
    ],
  ])('refuses a number as a list item when %s read the document', (_, body) => {
    const bound = bind(json, Buffer.from(body), undefined, wireModelOf(TransactionDto))!;
    expect(outcomeOf(() => toValidatedDto(TransactionDto, bound, 'transaction'))).toEqual({
      refused: expect.arrayContaining([
        ['transaction.requirements[0]', ["The value '0' is not valid for requirements."]],
      ]) as unknown,
    });
  });

  it('agrees with class-transformer and class-validator on every body the legacy service was recorded answering', () => {
    const formats = new WireFormats([json, xml, form], [json, xml]);
    const tally = newTally();
    const disagreements = LEGACY_EXCHANGES.flatMap(({ name, request }) => {
      if (request.method !== 'POST' || request.body === undefined) return [];
      const header = Object.entries(request.headers).find(
        ([field]) => field.toLowerCase() === 'content-type',
      )?.[1];
      const contentType = requestContentType({
        headers: { 'content-type': header },
      } as IncomingMessage);
      const reader = contentType && formats.readerFor(contentType.type);
      if (!reader) return [];
      const bytes = Buffer.from(request.body, request.encoding ?? 'utf8');
      return outcomesOf(reader, bytes, contentType.charset, tally)
        .filter(({ fastPath, expected }) => !isDeepStrictEqual(fastPath, expected))
        .map((outcomes) => ({ name, ...outcomes }));
    });
    expect(disagreements).toEqual([]);
    // `JSON requirements "x"`, a blank string and two objects with members for the list, read as
    // each model: the difference quotingSentListValues describes.
    expect(tally.quotingSentListValue).toBe(8);
    expect(tally.accepted).toBeGreaterThan(100);
    expect(tally.refused).toBeGreaterThan(100);
  });
});
