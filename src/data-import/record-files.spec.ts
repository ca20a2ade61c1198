import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequirementDto } from '../requirement/dto/requirement.dto';
import { ImportError } from './import-records';
import { recordFile } from './record-files';

const RECORDS = [
  { requirement_type_id: 7001, description: 'Fixture type A' },
  { requirement_type_id: 7002, description: 'Fixture type B' },
];

/** Every record of one reading, as an import's transaction reads them. */
async function readAll(file: AsyncIterable<RequirementDto>): Promise<number[]> {
  const ids: number[] = [];
  for await (const record of file) ids.push(record.requirement_type_id!);
  return ids;
}

describe('recordFile, read again when the database has the import run again', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'record-files-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('gives a file its records again', async () => {
    const path = join(directory, 'types.json');
    await writeFile(path, JSON.stringify(RECORDS));
    const file = await recordFile(path, RequirementDto, 'requirement_type_id', 10_000);
    expect(await readAll(file)).toEqual([7001, 7002]);
    expect(await readAll(file)).toEqual([7001, 7002]);
  });

  it('refuses a pipe the second time, saying why, instead of waiting for records already taken', async () => {
    const path = join(directory, 'types.json');
    execFileSync('mkfifo', [path]);
    const file = await recordFile(path, RequirementDto, 'requirement_type_id', 10_000);
    const writer = createWriteStream(path);
    writer.end(JSON.stringify(RECORDS));
    expect(await readAll(file)).toEqual([7001, 7002]);
    const again = readAll(file);
    await expect(again).rejects.toThrow(ImportError);
    await expect(again).rejects.toThrow(
      `${path}: the database had the import's transaction run again (contention), and a pipe is read once`,
    );
  });
});
