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
