import { CATALOGUE, transactionRecord } from './support/fixtures';
import { describeOnEachDatabase, describeOnSqlite } from './support/test-app';
import { child, childNames, inspectXml } from './support/xml-inspection';

/**
 * Seed 2.1's members and the added row_version, sorted ordinally as DataContractSerializer writes
 * them: `TotalPayments` first.
 */
const TRANSACTION_ELEMENTS = [
  'TotalPayments',
  'block',
  'brokerid',
  'brokername',
  'client_id',
  'clientname',
  'coborrower_id',
  'coborrowername',
  'date_added',
  'developer',
  'developer_id',
  'directorid',
  'directorid_recruit',
  'directorname',
  'directorname_recruit',
  'discount',
  'downpayment',
  'dp_payableinmonths',
  'financetype',
  'interestrate',
  'loanterm',
  'locked',
  'lot',
  'managerid',
  'managerid_recruit',
  'managername',
  'managername_recruit',
  'miscellaneous',
  'preparedby_userid',
  'property_id',
  'requirement_type_id',
  'requirements',
  'requirements_complete',
  'requirementtypename',
  'reservation',
  'reservation_id',
  'reservation_paid',
  'reservationdate',
  'row_version',
  'salesagentid',
  'salesagentid_recruit',
  'salesagentname',
  'salesagentname_recruit',
  'sellingprice',
  'stamp',
  'status',
  'subdivision',
  'submitted_requirements',
  'transaction_id',
  'unit_id',
];
const ACQUISITION_ELEMENTS = [
  'required',
  'requirement_description',
  'requirement_id',
  'requirement_type_id',
  'stamp',
  'submitted',
];
const REQUIREMENT_ELEMENTS = ['description', 'requirement_type_id', 'stamp', 'Acquisition'];
const NAMESPACE = 'http://schemas.datacontract.org/2004/07/PropertySales.Models';
const ROOT_ATTRIBUTES: Array<[string, string]> = [
  ['xmlns:i', 'http://www.w3.org/2001/XMLSchema-instance'],
  ['xmlns', NAMESPACE],
];

describe.each(['application/xml', 'text/xml'])('XML responses as %s', (mediaType) => {
  describeOnEachDatabase('every route', (context) => {
    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [
          transactionRecord(501, { coborrowername: null, coborrower_id: null }),
          transactionRecord(502, { requirements: [], locked: true }),
        ],
      });
    });

    const get = (path: string) => context.http.get(path).set('Accept', mediaType);

    it('GetRequirements: ArrayOfRequirement, members in the legacy order, no declaration', async () => {
      const response = await get('/api/Requirement/GetRequirements').expect(200);
      expect(response.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
      expect(response.text.startsWith('<ArrayOfRequirement xmlns:i=')).toBe(true);
      const root = inspectXml(response.text);
      expect(root.name).toBe('ArrayOfRequirement');
      expect(root.attributes).toEqual(ROOT_ATTRIBUTES);
      expect(childNames(root)).toEqual(['Requirement', 'Requirement', 'Requirement']);
      for (const requirement of root.children)
        expect(childNames(requirement)).toEqual(REQUIREMENT_ELEMENTS);
      const acquisitions = child(root.children[0], 'Acquisition');
      expect(childNames(acquisitions)).toEqual([
        'RequirementAcquisition',
        'RequirementAcquisition',
      ]);
      expect(childNames(acquisitions.children[0])).toEqual(ACQUISITION_ELEMENTS);
      expect(child(acquisitions.children[0], 'stamp').text).toBe('2026-01-15T01:00:00+00:00');
      expect(response.text).toContain('<Acquisition /></Requirement>');
      expect(response.text).toContain('<stamp i:nil="true" />');
    });

    it('GetTransaction: Transaction with every member in ordinal order, nil and list wrappers', async () => {
      const response = await get('/api/Transaction/GetTransaction/501').expect(200);
      expect(response.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
      const root = inspectXml(response.text);
      expect(root.name).toBe('Transaction');
      expect(root.attributes).toEqual(ROOT_ATTRIBUTES);
      expect(childNames(root)).toEqual(TRANSACTION_ELEMENTS);
      expect(response.text).toContain('<coborrowername i:nil="true" />');
      expect(child(root, 'TotalPayments').text).toBe('595000.1234');
      expect(child(root, 'reservation').text).toBe('25000');
      expect(child(root, 'reservation_paid').text).toBe('true');
      expect(child(root, 'row_version').text).toBe('1');
      const requirements = child(root, 'requirements');
      expect(childNames(requirements)).toEqual([
        'RequirementAcquisition',
        'RequirementAcquisition',
      ]);
      expect(childNames(requirements.children[0])).toEqual(ACQUISITION_ELEMENTS);

      const empty = await get('/api/Transaction/GetTransaction/502').expect(200);
      expect(empty.text).toContain('<requirements />');
      expect(empty.text).toContain('<locked>true</locked>');
    });

    it('GetAgentHistory: ArrayOfAgentAssignment, empty and after a change', async () => {
      const none = await get('/api/Transaction/GetAgentHistory/501').expect(200);
      expect(none.text).toBe(
        `<ArrayOfAgentAssignment xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="${NAMESPACE}" />`,
      );
      await context.http
        .post('/api/Transaction/UpdateAgents')
        .send({ transaction_id: 501, financetype: 'Cash', brokerid: 99, managername: null })
        .expect(204);
      const root = inspectXml((await get('/api/Transaction/GetAgentHistory/501').expect(200)).text);
      expect(root.name).toBe('ArrayOfAgentAssignment');
      expect(childNames(root)).toEqual(['AgentAssignment']);
      expect(childNames(root.children[0])).toEqual([
        'assignment_id',
        'changed_by',
        'changes',
        'row_version',
        'stamp',
        'transaction_id',
      ]);
      expect(child(root.children[0], 'row_version').text).toBe('2');
      const changes = child(root.children[0], 'changes');
      expect(changes.children.map((change) => childNames(change))).toEqual([
        ['after', 'before', 'field'],
        ['after', 'before', 'field'],
      ]);
      expect(changes.children.map((change) => child(change, 'field').text)).toEqual([
        'brokerid',
        'managername',
      ]);
    });

    it.each([
      [
        'unknown transaction',
        () => get('/api/Transaction/GetTransaction/999'),
        404,
        'No transaction with transaction_id 999 exists.',
      ],
      [
        'unknown path',
        () => get('/api/Nothing/Here'),
        404,
        "No HTTP resource was found that matches the request URI '/api/Nothing/Here'.",
      ],
      [
        'wrong method',
        () => context.http.delete('/api/Requirement/GetRequirements').set('Accept', mediaType),
        405,
        "The requested resource does not support http method 'DELETE'.",
      ],
      [
        'locked transaction',
        () =>
          context.http
            .post('/api/Transaction/UpdateAgents')
            .set('Accept', mediaType)
            .send({ transaction_id: 502, financetype: 'Cash' }),
        409,
        'Transaction 502 is locked; its agents cannot be changed.',
      ],
      [
        'unsupported media type',
        () =>
          context.http
            .post('/api/Transaction/UpdateAgents')
            .set('Accept', mediaType)
            .set('Content-Type', 'text/plain')
            .send('hi'),
        415,
        "The request entity's media type 'text/plain' is not supported for this resource.",
      ],
    ])('writes the %s error as a legacy XML Error', async (_, send, status, message) => {
      const response = await send().expect(status);
      expect(response.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
      expect(response.text).toBe(`<Error><Message>${message}</Message></Error>`);
    });

    it('writes validation errors with ModelState keys encoded as element names', async () => {
      const response = await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Accept', mediaType)
        .send({ transaction_id: 501, loanterm: 0, requirements: [{ requirement_id: 'x' }] })
        .expect(400);
      const root = inspectXml(response.text);
      expect(root.name).toBe('Error');
      expect(child(root, 'Message').text).toBe('The request is invalid.');
      expect(childNames(child(root, 'ModelState'))).toEqual([
        'transaction.financetype',
        'transaction.loanterm',
        'transaction.requirements_x005B_0_x005D_.requirement_id',
      ]);
    });
  });
});

describeOnSqlite('XML errors without a usable Accept', (context) => {
  it.each(['application/xml', 'text/xml'])(
    'answer a %s request body in its own type',
    async (mediaType) => {
      const response = await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', mediaType)
        // Matches no type written here (*/* would: it gets JSON, as Web API answered).
        .set('Accept', 'text/html')
        .send('<Transaction><transaction_id>1</transaction_id></Transaction>')
        .expect(400);
      expect(response.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
      expect(
        child(child(inspectXml(response.text), 'ModelState'), 'transaction.financetype').text,
      ).toBe('The financetype field is required.');
    },
  );

  it('answer a form request in JSON', async () => {
    const response = await context.http
      .post('/api/Transaction/UpdateAgents')
      .type('form')
      .send('transaction_id=1')
      .expect(400);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});

describeOnSqlite(
  'XML_NAMESPACE',
  (context) => {
    it('is the default namespace of every XML body', async () => {
      const response = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Accept', 'application/xml');
      expect(response.text).toBe(
        '<ArrayOfRequirement xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:example:sales" />',
      );
    });
  },
  { XML_NAMESPACE: 'urn:example:sales' },
);
