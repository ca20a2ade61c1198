import { request as httpRequest } from 'node:http';

/** What a response looks like to these helpers, from supertest or from rawRequest. */
export interface HttpResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** Transaction members in the seed's order (section 2.1). */
export const SEED_TRANSACTION_MEMBERS = [
  'transaction_id',
  'property_id',
  'reservation_id',
  'unit_id',
  'developer_id',
  'developer',
  'subdivision',
  'block',
  'lot',
  'client_id',
  'coborrower_id',
  'brokerid',
  'directorid',
  'directorid_recruit',
  'managerid',
  'managerid_recruit',
  'salesagentid',
  'salesagentid_recruit',
  'requirement_type_id',
  'submitted_requirements',
  'financetype',
  'interestrate',
  'loanterm',
  'sellingprice',
  'downpayment',
  'dp_payableinmonths',
  'reservation',
  'discount',
  'miscellaneous',
  'TotalPayments',
  'clientname',
  'coborrowername',
  'brokername',
  'directorname',
  'directorname_recruit',
  'managername',
  'managername_recruit',
  'salesagentname',
  'salesagentname_recruit',
  'requirementtypename',
  'requirements',
  'requirements_complete',
  'reservation_paid',
  'reservationdate',
  'status',
  'locked',
  'preparedby_userid',
  'date_added',
  'stamp',
];

/** RequirementAcquisition members in the seed's order (section 2.2). */
export const SEED_ACQUISITION_MEMBERS = [
  'requirement_id',
  'requirement_type_id',
  'required',
  'requirement_description',
  'stamp',
  'submitted',
];

/** What must never reach a client: stack frames, file paths, ORM and driver names, SQL text. */
const LEAKS: readonly RegExp[] = [
  /\n\s*at /,
  /\bat .*:\d+:\d+/,
  /node_modules/,
  /\/work\/|[A-Za-z]:\\|\.ts:\d+|\.js:\d+/,
  /QueryFailedError|TypeORMError|EntityNotFound|EntityMetadata/,
  /\b(?:SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE TABLE|ALTER TABLE)\s/,
  /\bER_[A-Z_]+|SQLITE_[A-Z]+|errno|sqlState|sqlMessage/,
  /mysql2|better-sqlite3|mariadb|\bsqlite\b/i,
];

export function expectNoLeak(text: string): void {
  for (const pattern of LEAKS) expect(text).not.toMatch(pattern);
}

/**
 * A JSON error in the legacy type, with the legacy Web API members and the RFC 9457 ones; `ModelState` is required on a 400 that
 * reports request validation (the default for 400).
 */
export function expectProblem(
  response: HttpResult,
  status: number,
  options: { modelState?: boolean; mediaType?: string } = {},
): Record<string, unknown> {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(
    `${options.mediaType ?? 'application/json'}; charset=utf-8`,
  );
  expectNoLeak(response.text);
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect(body).toEqual(
    expect.objectContaining({
      type: expect.any(String),
      title: expect.any(String),
      status,
      detail: expect.any(String),
      Message: expect.any(String),
    }),
  );
  expect((body.type as string).length).toBeGreaterThan(0);
  if (options.modelState ?? status === 400) {
    const modelState = body.ModelState as Record<string, unknown>;
    expect(modelState).toEqual(expect.any(Object));
    expect(Object.keys(modelState).length).toBeGreaterThan(0);
    for (const messages of Object.values(modelState)) {
      expect(messages).toEqual(expect.arrayContaining([expect.any(String)]));
    }
  }
  return body;
}

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** Sent as is; with `chunked`, in pieces without a Content-Length. */
  readonly body?: string | Buffer;
  readonly chunked?: boolean;
}

/**
 * A request exactly as described, for what supertest would change: a body without a Content-Type, a
 * chunked body, a path with dot segments or backslashes (sent as written, not resolved). Resolves
 * with the response even when the server stops reading the body early.
 */
export function rawRequest(baseUrl: string, spec: RawRequest): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const url = new URL(baseUrl);
    const headers: Record<string, string> = { ...spec.headers };
    if (spec.body !== undefined && !spec.chunked)
      headers['Content-Length'] = String(Buffer.byteLength(spec.body));
    let answered = false;
    const options = { method: spec.method, path: spec.path, headers };
    const outgoing = httpRequest(url, options, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (spec.body !== undefined && spec.chunked) {
      const piece = 256;
      for (let start = 0; start < spec.body.length; start += piece)
        outgoing.write(spec.body.slice(start, start + piece));
    } else if (spec.body !== undefined) {
      outgoing.write(spec.body);
    }
    outgoing.end();
  });
}
