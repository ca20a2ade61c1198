import { cpuUsage } from 'node:process';
import { UpdateAgentsDto } from '../src/transaction/dto/update-agents.dto';
import {
  JsonCodec,
  REQUEST_QUOTAS,
  XmlCodec,
  toValidatedDto,
  wireModelOf,
  type WireReader,
} from '../src/wire';

/**
 * `node dist/bench/body-cost.js`: the CPU one request body costs the codec that reads it, for the
 * shapes that cost most per byte, each near the default 1 MB body limit. A body is either read or
 * refused; either way the figure is what a client can make the service spend on one request.
 */

const LIMIT_BYTES = 1024 * 1024;
const ROUNDS = 7;

const { maxElements, maxAttributes, maxNameLength } = REQUEST_QUOTAS;
/** A body of `item` repeated between `open` and `close`, `count` times or up to the size limit. */
const fill = (open: string, item: string, close: string, count = Number.POSITIVE_INFINITY) => {
  const fits = Math.floor((LIMIT_BYTES - open.length - close.length) / item.length);
  return `${open}${item.repeat(Math.min(count, fits))}${close}`;
};
const TRANSACTION =
  '<Transaction><transaction_id>1</transaction_id><financetype>Cash</financetype>';
const JSON_TRANSACTION = '{"transaction_id":1,"financetype":"Cash"';
const attributes = (count: number) => Array.from({ length: count }, (_, n) => ` a${n}=""`).join('');
const jsonKeys = (count: number) =>
  `{${Array.from({ length: count }, (_, n) => `"k${n}":0`).join(',')}}`;
const requirement =
  '<RequirementAcquisition><requirement_id>1</requirement_id></RequirementAcquisition>';

const xml = new XmlCodec('urn:bench');
const json = new JsonCodec();
const model = wireModelOf(UpdateAgentsDto);

// The bodies the issue measured, then the costliest shapes at the quotas.
const BODIES: Array<[string, WireReader, string]> = [
  ['XML, 50,000 empty elements', xml, fill('<Transaction>', '<a/>', '</Transaction>', 50_000)],
  ['XML, 100,000 empty elements', xml, fill('<Transaction>', '<a/>', '</Transaction>', 100_000)],
  ['XML, 200,000 empty elements', xml, fill('<Transaction>', '<a/>', '</Transaction>', 200_000)],
  ['XML, 50,000 attributes', xml, `<Transaction${attributes(50_000)}/>`],
  ['JSON, 80,000 keys', json, jsonKeys(80_000)],
  ['XML, empty elements to the limit', xml, fill('<Transaction>', '<a/>', '</Transaction>')],
  [
    'XML, empty elements at the quota',
    xml,
    fill(TRANSACTION, '<a/>', '</Transaction>', maxElements - 3),
  ],
  [
    'XML, requirements at the quota',
    xml,
    fill(
      `${TRANSACTION}<requirements>`,
      requirement,
      '</requirements></Transaction>',
      (maxElements - 4) / 2,
    ),
  ],
  [
    'XML, empty requirements at the quota',
    xml,
    fill(
      `${TRANSACTION}<requirements>`,
      '<RequirementAcquisition/>',
      '</requirements></Transaction>',
      maxElements - 4,
    ),
  ],
  [
    `XML, ${maxAttributes} attributes on each element`,
    xml,
    fill(TRANSACTION, `<a${attributes(maxAttributes)}/>`, '</Transaction>'),
  ],
  [
    `XML, ${maxNameLength}-character names`,
    xml,
    fill(TRANSACTION, `<${'n'.repeat(maxNameLength)}/>`, '</Transaction>'),
  ],
  ['XML, one text', xml, fill('<Transaction><financetype>', 'x', '</financetype></Transaction>')],
  ['XML, comments', xml, fill(TRANSACTION, '<!---->', '</Transaction>')],
  ['XML, one attribute value', xml, fill('<Transaction a="', 'x', '"/>')],
  ['XML, one comment', xml, fill('<Transaction><!--', 'x', '--></Transaction>')],
  ['JSON, keys at the quota', json, jsonKeys(maxElements)],
  ['JSON, array items to the limit', json, fill('{"requirements":[', '0,', '0]}')],
  ['JSON (lenient), one string of escapes', json, fill("{financetype:'", '\\n', "'}")],
  [
    'JSON, empty records at the quota',
    json,
    fill(`${JSON_TRANSACTION},"requirements":[`, '{},', '{}]}', maxElements - 4),
  ],
  [
    'JSON, records at the quota',
    json,
    fill(
      `${JSON_TRANSACTION},"requirements":[`,
      '{"requirement_id":1},',
      '{}]}',
      (maxElements - 4) / 2,
    ),
  ],
  [
    'JSON (lenient), empty records at the quota',
    json,
    fill("{transaction_id:1,financetype:'Cash',requirements:[", '{},', ']}', maxElements - 4),
  ],
];

/**
 * CPU milliseconds (user + system) of reading one body as UpdateAgents does, parsing, binding and
 * validating it: the median of a few rounds after a warm-up.
 */
function cpuOf(reader: WireReader, body: string): { ms: number; outcome: string } {
  let outcome = 'read';
  const decode = () => {
    try {
      toValidatedDto(UpdateAgentsDto, reader.decode(body, model), model.parameterName);
      outcome = 'read';
    } catch (error) {
      outcome = `refused: ${(error as Error).message.slice(0, 60)}`;
    }
  };
  decode();
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = cpuUsage();
    decode();
    const spent = cpuUsage(start);
    samples.push((spent.user + spent.system) / 1000);
  }
  samples.sort((a, b) => a - b);
  return { ms: samples[Math.floor(ROUNDS / 2)], outcome };
}

console.log('| body | bytes | CPU ms | outcome |\n|---|---:|---:|---|');
for (const [name, reader, body] of BODIES) {
  const bytes = Buffer.byteLength(body);
  if (bytes > LIMIT_BYTES) throw new Error(`${name} is ${bytes} bytes, past the limit`);
  const { ms, outcome } = cpuOf(reader, body);
  console.log(`| ${name} | ${bytes} | ${ms.toFixed(1)} | ${outcome} |`);
}
