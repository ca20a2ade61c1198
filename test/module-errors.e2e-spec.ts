import { type OpenAPIObject } from '@nestjs/swagger';
import {
  CREATED_LOCATION,
  ErrorsProbeModule,
  ProbeClosedException,
  INTERNAL_DETAIL,
  ProbeRefusedError,
  ProbeUnprocessableError,
} from './support/errors-probe.module';
import { expectNoLeak, expectProblem } from './support/http-assertions';
import { RunningApp } from './support/test-app';

/** What each probe route answers: the status and message its handler, guard or pipe gave. */
const ANSWERS: ReadonlyArray<{
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly status: number;
  readonly message: string;
}> = [
  { method: 'post', path: 'Developer', status: 404, message: 'No such developer.' },
  { method: 'get', path: 'Conflict', status: 409, message: 'probe' },
  { method: 'get', path: 'Forbidden', status: 403, message: 'Forbidden.' },
  {
    method: 'get',
    path: 'Unprocessable',
    status: 422,
    message: 'n must not be greater than 10; page must be an integer number',
  },
  // A guard refusing, and a pipe refusing a parameter, as Nest raises them.
  { method: 'get', path: 'Guarded', status: 403, message: 'Forbidden resource' },
  {
    method: 'get',
    path: 'GetDeveloper/abc',
    status: 400,
    message: 'Validation failed (numeric string is expected)',
  },
  // A module's own domain errors, with statuses the wire layer does not know of.
  { method: 'get', path: 'Refused', status: 403, message: 'The probe does not serve you.' },
  {
    method: 'get',
    path: 'DomainUnprocessable',
    status: 422,
    message: 'The probe cannot process this: the moon is full.',
  },
  {
    method: 'get',
    path: 'GetDeveloper/7',
    status: 404,
    message: 'No developer with developer_id 7 exists.',
  },
  // A NestJS exception of the module's own, as @WireErrors documents it.
  { method: 'get', path: 'Closed', status: 409, message: 'The probe closed at five.' },
  // Server errors keep their status but never their own text.
  { method: 'get', path: 'Crash', status: 500, message: 'An error has occurred.' },
  { method: 'get', path: 'ServerError', status: 500, message: 'An error has occurred.' },
  { method: 'get', path: 'Unavailable', status: 503, message: 'Service Unavailable.' },
];

describe('errors of a module the service does not know of', () => {
  let running: RunningApp;
  beforeAll(async () => {
    running = await RunningApp.start('sqlite::memory:', {}, [ErrorsProbeModule]);
  });
  afterAll(() => running?.close());

  describe.each(ANSWERS)('$method $path', ({ method, path, status, message }) => {
    const url = `/api/ErrorsProbe/${path}`;

    it(`answers ${status} with its message in JSON, the legacy and RFC 9457 members`, async () => {
      const response = await running.http[method](url);
      const body = expectProblem(response, status, { modelState: false });
      expect(body).toMatchObject({ status, Message: message, detail: message });
      expect(body).not.toHaveProperty('ModelState');
      expect(response.headers.allow).toBeUndefined();
      expect(response.text).not.toContain(INTERNAL_DETAIL);
    });

    it(`answers ${status} with its message in the legacy XML Error`, async () => {
      const response = await running.http[method](url).set('Accept', 'application/xml');
      expect(response.status).toBe(status);
      expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
      const escaped = message.replace(/&/g, '&amp;').replace(/</g, '&lt;');
      expect(response.text).toBe(`<Error><Message>${escaped}</Message></Error>`);
      expect(response.headers.allow).toBeUndefined();
      expectNoLeak(response.text);
    });
  });

  it('answers application/problem+json when Accept asks for it', async () => {
    const response = await running.http
      .get('/api/ErrorsProbe/Conflict')
      .set('Accept', 'application/problem+json');
    const body = expectProblem(response, 409, { mediaType: 'application/problem+json' });
    expect(body).toMatchObject({ title: 'Conflict', Message: 'probe' });
  });

  it('keeps the router answers where no route matched: 405 with Allow, or 404', async () => {
    for (const method of ['get', 'head'] as const) {
      const wrongMethod = await running.http[method]('/api/ErrorsProbe/Developer');
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.allow).toBe('POST');
    }
    const body = expectProblem(await running.http.post('/api/ErrorsProbe/Conflict'), 405);
    expect(body.Message).toBe("The requested resource does not support http method 'POST'.");
    const unknown = expectProblem(await running.http.get('/api/ErrorsProbe/Nothing'), 404);
    expect(unknown.Message).toBe(
      "No HTTP resource was found that matches the request URI '/api/ErrorsProbe/Nothing'.",
    );
  });

  it('documents each route error as its own class describes it', async () => {
    const document = (await running.http.get('/swagger-json').expect(200)).body as OpenAPIObject;
    const responses = (path: string) =>
      (document.paths[path]?.get?.responses ?? {}) as Record<string, { description: string }>;

    expect(responses('/api/ErrorsProbe/GetDeveloper/{developer_id}')['404']?.description).toBe(
      'No such developer.',
    );
    expect(responses('/api/ErrorsProbe/Refused')).toMatchObject({
      '403': { description: ProbeRefusedError.description },
      '422': { description: ProbeUnprocessableError.description },
    });
    expect(responses('/api/Transaction/GetTransaction/{transaction_id}')['404']?.description).toBe(
      'No such transaction.',
    );
  });

  it('documents an HttpException class listed in @WireErrors with the answer it gives', async () => {
    const document = (await running.http.get('/swagger-json').expect(200)).body as OpenAPIObject;
    const conflict = document.paths['/api/ErrorsProbe/Closed'].get!.responses['409'] as {
      description: string;
      content: Record<string, { example: unknown }>;
    };
    expect(conflict.description).toBe(ProbeClosedException.description);
    const json = await running.http
      .get('/api/ErrorsProbe/Closed')
      .set('Accept', 'application/json');
    const { requestId, ...answered } = json.body as Record<string, unknown>;
    expect(requestId).toEqual(expect.any(String));
    expect(conflict.content['application/json'].example).toEqual({
      ...answered,
      requestId: expect.any(String) as unknown,
    });
    const xml = await running.http.get('/api/ErrorsProbe/Closed').set('Accept', 'application/xml');
    expect(conflict.content['application/xml'].example).toBe(xml.text);
  });

  it('answers a route that creates 201 with Location and no ETag, as its document says', async () => {
    const document = (await running.http.get('/swagger-json').expect(200)).body as OpenAPIObject;
    const responses = document.paths['/api/ErrorsProbe/Record'].post!.responses as Record<
      string,
      { headers?: Record<string, unknown> }
    >;
    expect(Object.keys(responses['201'].headers ?? {}).sort()).toEqual([
      'Location',
      'X-Request-Id',
    ]);
    expect(responses['200']).toBeUndefined();
    const created = await running.http.post('/api/ErrorsProbe/Record');
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(CREATED_LOCATION);
    expect(created.headers.etag).toBeUndefined();
  });
});
