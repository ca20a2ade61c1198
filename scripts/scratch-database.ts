import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { createConnection } from 'mysql2/promise';

/** The variable that names the prefix of every scratch database, and the server they are made on. */
export const SCRATCH_PREFIX_VARIABLE = 'SCRATCH_DATABASE_PREFIX';
export const SERVER_VARIABLE = 'TEST_DATABASE_URL';

/** The MariaDB server the tests, the generators and the benchmarks make their databases on. */
export const scratchServerUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  env[SERVER_VARIABLE] ?? 'mariadb://root@127.0.0.1:3306/test';

/**
 * What every scratch database's name starts with: SCRATCH_DATABASE_PREFIX, by default `ps_` and the
 * user's name, so that people sharing a server tell their own databases (and leftovers) from others'.
 */
export function scratchDatabasePrefix(env: NodeJS.ProcessEnv = process.env): string {
  const given = env[SCRATCH_PREFIX_VARIABLE];
  if (given !== undefined) {
    if (!/^\w{1,32}$/.test(given))
      throw new Error(
        `${SCRATCH_PREFIX_VARIABLE} must be 1 to 32 letters, digits or underscores: "${given}" is not.`,
      );
    return given;
  }
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No entry for this uid (a container run under an arbitrary user).
    user = env.USER ?? '';
  }
  const name = user.toLowerCase().replace(/\W/g, '_').slice(0, 16);
  return `ps_${name || 'user'}_`;
}

/** A fresh name for a scratch database made for `purpose` (test, generate, bench…). */
export function scratchDatabaseName(purpose: string, env: NodeJS.ProcessEnv = process.env): string {
  return `${scratchDatabasePrefix(env)}${purpose}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export interface ScratchDatabase {
  /** DATABASE_URL of the new, empty database. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Makes a scratch database for `purpose` on the server `serverUrl` names (mariadb://…). */
export async function createScratchDatabase(
  serverUrl: string,
  purpose: string,
): Promise<ScratchDatabase> {
  const name = scratchDatabaseName(purpose);
  const admin = new URL(serverUrl);
  admin.protocol = 'mysql:';
  admin.pathname = '/';
  const onServer = async (sql: string) => {
    const connection = await createConnection({ uri: admin.toString(), connectTimeout: 5000 });
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  };
  await onServer(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => onServer(`DROP DATABASE IF EXISTS \`${name}\``),
  };
}
