import { expectProblem } from './support/http-assertions';
import { PlainNestModule } from './support/plain-nest.module';
import { RunningApp } from './support/test-app';

const CREATE = '/api/PlainNest/Create';
const FORM = 'application/x-www-form-urlencoded';

/** One CreatePlainDto, written in each format, with a member the DTO does not declare. */
const VALID_BODIES = [
  {
    format: 'JSON',
    contentType: 'application/json',
    body: JSON.stringify({
      n: 5,
      name: 'Ada',
      due: '2026-01-02T00:00:00.000Z',
      tags: ['a'],
      items: [{ name: 'bolt', quantity: 2 }],
      extra: 'kept',
    }),
  },
  {
    format: 'XML',
    contentType: 'application/xml',
    body:
      '<CreatePlainDto xmlns="urn:any-namespace"><n>5</n><name>Ada</name>' +
      '<due>2026-01-02T00:00:00.000Z</due><tags>a</tags>' +
      '<items><name>bolt</name><quantity>2</quantity></items><extra>kept</extra></CreatePlainDto>',
  },
  {
    format: 'form',
    contentType: FORM,
    body: 'n=5&name=Ada&due=2026-01-02T00%3A00%3A00.000Z&tags[]=a&items[0][name]=bolt&items[0].quantity=2&extra=kept',
  },
];

/** What the handler receives from each: values converted to the declared types, classes built. */
const RECEIVED = {
  received: {
    n: 5,
    name: 'Ada',
    due: '2026-01-02T00:00:00.000Z',
    tags: ['a'],
    items: [{ name: 'bolt', quantity: 2 }],
    extra: 'kept',
  },
  classes: ['CreatePlainDto', 'PlainItemDto'],
};

/** One invalid CreatePlainDto in each format: n over @Max(10), an item's quantity under @Min(1). */
const INVALID_BODIES = [
  {
    format: 'JSON',
    contentType: 'application/json',
    body: '{"n":999,"name":"Ada","items":[{"name":"bolt","quantity":0}]}',
  },
  {
    format: 'XML',
    contentType: 'text/xml',
    body:
      '<CreatePlainDto><n>999</n><name>Ada</name>' +
      '<items><name>bolt</name><quantity>0</quantity></items></CreatePlainDto>',
  },
  {
    format: 'form',
    contentType: FORM,
    body: 'n=999&name=Ada&items[0][name]=bolt&items[0][quantity]=0',
  },
];

/** class-validator's messages, keyed by the body parameter (named after its class) and the member. */
const INVALID_MODEL_STATE = {
  'createPlainDto.n': ['n must not be greater than 10'],
  'createPlainDto.items[0].quantity': ['quantity must not be less than 1'],
};

describe('plain NestJS DTOs, as the NestJS documentation writes them', () => {
  let running: RunningApp;
  beforeAll(async () => {
    running = await RunningApp.start('sqlite::memory:', {}, [PlainNestModule]);
  });
  afterAll(() => running?.close());

  const post = (contentType: string, body: string) =>
    running.http.post(CREATE).set('Content-Type', contentType).send(body);

  describe('@Body()', () => {
    it.each(VALID_BODIES)(
      'converts a valid $format body to the DTO, unknown members kept',
      async ({ contentType, body }) => {
        const response = await post(contentType, body);
        expect(response.status).toBe(201);
        expect(response.body).toEqual(RECEIVED);
      },
    );

    it.each(INVALID_BODIES)(
      'answers 400 with the ModelState of an invalid $format body',
      async ({ contentType, body }) => {
        const response = await post(contentType, body).set('Accept', 'application/json');
        const problem = expectProblem(response, 400);
        expect(problem.Message).toBe('The request is invalid.');
        expect(problem.ModelState).toEqual(INVALID_MODEL_STATE);
      },
    );

    it('answers an invalid XML body in the legacy XML Error', async () => {
      const response = await post('application/xml', INVALID_BODIES[1].body);
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(response.text).toBe(
        '<Error><Message>The request is invalid.</Message><ModelState>' +
          '<createPlainDto.n>n must not be greater than 10</createPlainDto.n>' +
          '<createPlainDto.items_x005B_0_x005D_.quantity>quantity must not be less than 1' +
          '</createPlainDto.items_x005B_0_x005D_.quantity></ModelState></Error>',
      );
    });

    it('reads an XML list as its repeated elements', async () => {
      const response = await post(
        'application/xml',
        '<CreatePlainDto><n>1</n><name>Ada</name><tags>a</tags><tags>b</tags>' +
          '<items><name>bolt</name><quantity>2</quantity></items>' +
          '<items><name>nut</name><quantity>3</quantity></items></CreatePlainDto>',
      );
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        received: {
          tags: ['a', 'b'],
          items: [
            { name: 'bolt', quantity: 2 },
            { name: 'nut', quantity: 3 },
          ],
        },
        classes: ['CreatePlainDto', 'PlainItemDto', 'PlainItemDto'],
      });
    });

    it('reads a form list from repeated keys and from indexed keys in order', async () => {
      const response = await post(
        FORM,
        'n=1&name=Ada&tags=a&tags=b&items[1].name=nut&items[1].quantity=3&items[0][name]=bolt&items[0][quantity]=2',
      );
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        received: {
          tags: ['a', 'b'],
          items: [
            { name: 'bolt', quantity: 2 },
            { name: 'nut', quantity: 3 },
          ],
        },
      });
    });

    it('validates a missing body as an empty DTO', async () => {
      const problem = expectProblem(await running.http.post(CREATE), 400);
      expect(problem.ModelState).toEqual({
        'createPlainDto.n': expect.arrayContaining(['n must be an integer number']),
        'createPlainDto.name': expect.arrayContaining(['name must be a string']),
      });
    });

    it.each([
      ['a JSON array', 'application/json', '[{"n":1}]', 'must be a JSON object holding one'],
      ['malformed JSON', 'application/json', '{"n":', 'The request body is not valid JSON.'],
      [
        'an XML root of another name',
        'application/xml',
        '<Other><n>1</n></Other>',
        'CreatePlainDto',
      ],
      ['malformed XML', 'application/xml', '<CreatePlainDto><n>1</CreatePlainDto>', 'well-formed'],
    ])('refuses %s against the body parameter', async (_, contentType, body, message) => {
      const response = await post(contentType, body).set('Accept', 'application/json');
      const problem = expectProblem(response, 400);
      expect(problem.ModelState).toEqual({
        createPlainDto: [expect.stringContaining(message)],
      });
    });
  });

  describe("@Body() untyped, and @Body('member')", () => {
    const BODIES = [
      ['JSON', 'application/json', '{"name":"Ada","n":"5"}'],
      ['XML', 'application/xml', '<Anything xmlns="urn:x"><name>Ada</name><n>5</n></Anything>'],
      ['form', FORM, 'name=Ada&n=5'],
    ];

    it.each(BODIES)('hands an untyped %s body over as parsed', async (_, contentType, body) => {
      const response = await running.http
        .post('/api/PlainNest/Untyped')
        .set('Content-Type', contentType)
        .send(body);
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ body: { name: 'Ada', n: '5' } });
    });

    it.each(BODIES)('hands members of a %s body over by name', async (_, contentType, body) => {
      const response = await running.http
        .post('/api/PlainNest/Member')
        .set('Content-Type', contentType)
        .send(body);
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ name: 'Ada', n: '5' });
    });

    it('refuses a malformed untyped body with 400 on the body', async () => {
      const response = await running.http
        .post('/api/PlainNest/Untyped')
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json')
        .send('{"name":');
      expect(Object.keys(expectProblem(response, 400).ModelState as object)).toEqual(['body']);
    });
  });

  describe('@Query()', () => {
    it('converts the query to the DTO, unknown parameters kept', async () => {
      const response = await running.http.get('/api/PlainNest/List?page=2&sort=name&extra=1');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        received: { page: 2, sort: 'name', extra: '1' },
        classes: ['ListQueryDto'],
      });
    });

    it('answers 400 keyed by the member for a page that is not an integer', async () => {
      const problem = expectProblem(await running.http.get('/api/PlainNest/List?page=abc'), 400);
      expect(problem.ModelState).toEqual({
        page: ['page must not be less than 1', 'page must be an integer number'],
      });
    });

    it('answers in the negotiated format', async () => {
      const response = await running.http
        .get('/api/PlainNest/List?sort=size')
        .set('Accept', 'application/xml');
      expect(response.status).toBe(400);
      expect(response.text).toBe(
        '<Error><Message>The request is invalid.</Message><ModelState>' +
          '<sort>sort must be one of the following values: name, date</sort></ModelState></Error>',
      );
    });

    it('validates a named query value against its DTO type, as ValidationPipe does', async () => {
      const absent = await running.http.get('/api/PlainNest/Filtered');
      expect(absent.body).toEqual({ received: {}, classes: ['ListQueryDto'] });
      const text = expectProblem(await running.http.get('/api/PlainNest/Filtered?filter=abc'), 400);
      expect(text.ModelState).toEqual({ filter: ['Validation failed (object is expected)'] });
    });
  });

  describe('@Param()', () => {
    it('converts the route values to the DTO', async () => {
      const response = await running.http.get('/api/PlainNest/Item/7/bolt');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        received: { id: 7, slug: 'bolt' },
        classes: ['ItemParamsDto'],
      });
    });

    it('answers 400 keyed by the member for invalid route values', async () => {
      const problem = expectProblem(
        await running.http.get('/api/PlainNest/Item/0/much-too-long-a-slug'),
        400,
      );
      expect(problem.ModelState).toEqual({
        id: ['id must not be less than 1'],
        slug: ['slug must be shorter than or equal to 10 characters'],
      });
    });

    it('passes a route value of a primitive type unchanged', async () => {
      const response = await running.http.get('/api/PlainNest/Raw/007');
      expect(response.body).toEqual({ id: '007' });
    });
  });
});
