import { CATALOGUE } from './support/fixtures';
import { describeOnEachDatabase, RunningApp } from './support/test-app';

describeOnEachDatabase('GET Requirement/GetRequirements', (context) => {
  it('answers an empty catalogue with an empty array', async () => {
    const response = await context.http.get('/api/Requirement/GetRequirements').expect(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.text).toBe('[]');
  });

  it('lists every type with its records, ordered, members in the seed order, dates in the service zone', async () => {
    await context.running.seed({ requirements: [...CATALOGUE].reverse() });
    const response = await context.http.get('/api/Requirement/GetRequirements').expect(200);
    const body = response.body as Array<Record<string, unknown>>;
    expect(body.map((type) => type.requirement_type_id)).toEqual([1, 2, 3]);
    expect(Object.keys(body[0])).toEqual([
      'Acquisition',
      'requirement_type_id',
      'description',
      'stamp',
    ]);
    expect(body[0]).toEqual({
      Acquisition: [
        {
          requirement_id: 11,
          requirement_type_id: 1,
          required: 'Required',
          requirement_description: 'Valid ID',
          stamp: '2026-01-15T01:00:00+00:00',
          submitted: false,
        },
        {
          requirement_id: 12,
          requirement_type_id: 1,
          required: 'Optional',
          requirement_description: 'Proof of billing',
          stamp: null,
          submitted: null,
        },
      ],
      requirement_type_id: 1,
      description: 'Cash',
      stamp: '2026-01-15T01:00:00+00:00',
    });
    expect(body[2]).toEqual({
      Acquisition: [],
      requirement_type_id: 3,
      description: 'Empty type',
      stamp: null,
    });
  });

  it('answers a repeated read with 304 when If-None-Match carries its ETag', async () => {
    const first = await context.http.get('/api/Requirement/GetRequirements').expect(200);
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[^"]+"$/);
    await context.http
      .get('/api/Requirement/GetRequirements')
      .set('If-None-Match', etag)
      .expect(304);
  });

  it('answers 304 also to a request saying no-cache, as Node.js fetch sends every conditional one', async () => {
    const path = '/api/Requirement/GetRequirements';
    const { etag } = (await context.http.get(path).expect(200)).headers;
    for (const [name, value] of [
      ['Cache-Control', 'no-cache'],
      ['Pragma', 'no-cache'],
      ['Cache-Control', 'max-age=0'],
    ]) {
      const response = await context.http.get(path).set('If-None-Match', etag).set(name, value);
      expect(response.status).toBe(304);
      expect(response.text).toBe('');
      expect(response.headers.etag).toBe(etag);
    }
    for (const list of [`"other", ${etag}`, `W/${etag}`, '*']) {
      await context.http.get(path).set('If-None-Match', list).set('Pragma', 'no-cache').expect(304);
    }
    await context.http
      .get(path)
      .set('If-None-Match', '"other"')
      .set('Pragma', 'no-cache')
      .expect(200);
    // Node.js fetch adds Cache-Control and Pragma: no-cache to a request carrying If-None-Match.
    const viaFetch = await fetch(`${context.running.baseUrl}${path}`, {
      headers: { 'If-None-Match': etag },
    });
    expect(viaFetch.status).toBe(304);
  });

  it('answers in the request Content-Type when there is no Accept header, as Web API chose', async () => {
    const path = '/api/Requirement/GetRequirements';
    // supertest sends no Accept header unless told to.
    for (const contentType of ['application/xml', 'text/xml', 'text/json']) {
      const response = await context.http
        .get(path)
        .set('Content-Type', `${contentType}; charset=utf-8`)
        .expect(200);
      expect(response.headers['content-type']).toBe(`${contentType}; charset=utf-8`);
      expect(response.headers.vary).toMatch(/Content-Type/);
    }
    const xml = await context.http.get(path).set('Content-Type', 'text/xml').expect(200);
    expect(xml.text).toMatch(/^<ArrayOfRequirement /);
    // A range answers in the first type written here that it names, as the legacy matched it.
    for (const [range, mediaType] of [
      ['text/*', 'text/json'],
      ['application/*', 'application/json'],
      ['*/*', 'application/json'],
    ]) {
      const response = await context.http.get(path).set('Content-Type', range).expect(200);
      expect(response.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
    }
    // An Accept header that matches a written type decides; */* is not "no Accept".
    for (const accept of ['*/*', 'application/json']) {
      const response = await context.http
        .get(path)
        .set('Content-Type', 'text/xml')
        .set('Accept', accept)
        .expect(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    }
  });
});

describeOnEachDatabase('GetRequirements across instances', (context) => {
  it('serves a catalogue import made through another instance at once, with a new ETag', async () => {
    await context.running.seed({ requirements: CATALOGUE.slice(0, 1) });
    const other = await RunningApp.start(context.database.url);
    try {
      const first = await context.http.get('/api/Requirement/GetRequirements').expect(200);
      const firstXml = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Accept', 'application/xml')
        .expect(200);
      expect((first.body as unknown[]).length).toBe(1);
      // The other instance writes the catalogue; this one cached it a moment ago.
      await other.seed({ requirements: CATALOGUE });
      const second = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('If-None-Match', first.headers.etag)
        .expect(200);
      expect((second.body as unknown[]).length).toBe(3);
      expect(second.headers.etag).not.toBe(first.headers.etag);
      const secondXml = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Accept', 'application/xml')
        .expect(200);
      expect(secondXml.text).not.toBe(firstXml.text);
      expect(secondXml.text.match(/<Requirement>/g)).toHaveLength(3);
      // Both instances answer with the same bytes and the same ETag.
      const fromOther = await other.http.get('/api/Requirement/GetRequirements').expect(200);
      expect(fromOther.text).toBe(second.text);
      expect(fromOther.headers.etag).toBe(second.headers.etag);
    } finally {
      await other.close();
    }
  });
});
