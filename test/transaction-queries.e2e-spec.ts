import { AGENT_CHAIN_FIELDS, TransactionQueries } from '../src/transaction';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { describeOnEachDatabase } from './support/test-app';

/** Transaction 1's agent chain, as transactionRecord seeds it. */
const CHAIN = Object.fromEntries(
  AGENT_CHAIN_FIELDS.map((field) => [
    field,
    (transactionRecord(1) as Record<string, unknown>)[field],
  ]),
);

/** Transaction 2 stores no agent and no amount. */
const EMPTY_CHAIN = Object.fromEntries(Object.keys(CHAIN).map((field) => [field, null]));

/** Transaction 3's amounts, at the edges of DECIMAL(15,4). */
const EDGE_AMOUNTS = {
  sellingprice: 100000000,
  downpayment: 570000.1234,
  reservation: 1,
  discount: -12345.6789,
  miscellaneous: 0,
  TotalPayments: 99999999999.9999,
};

describeOnEachDatabase(
  'TransactionQueries, the transaction module’s door for other modules',
  (context) => {
    let queries: TransactionQueries;

    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [
          transactionRecord(1),
          { transaction_id: 2, financetype: 'Cash' },
          transactionRecord(3, EDGE_AMOUNTS),
        ],
      });
      queries = context.running.app.get(TransactionQueries);
    });

    it('reads one transaction’s agent chain, and undefined for an id with no transaction', async () => {
      expect(await queries.agentChainOf(1)).toEqual(CHAIN);
      expect(await queries.agentChainOf(2)).toEqual(EMPTY_CHAIN);
      expect(await queries.agentChainOf(99)).toBeUndefined();
    });

    it('reads the agent chains of a batch by id, leaving out ids with no transaction', async () => {
      const chains = await queries.agentChainsOf([2, 99, 1, 1]);
      expect([...chains.keys()].sort()).toEqual([1, 2]);
      expect(chains.get(1)).toEqual(CHAIN);
      expect(chains.get(2)).toEqual(EMPTY_CHAIN);
      expect((await queries.agentChainsOf([])).size).toBe(0);
    });

    it('reads a batch larger than one statement holds', async () => {
      const ids = Array.from({ length: 2500 }, (_, index) => 2500 - index);
      const chains = await queries.agentChainsOf(ids);
      expect([...chains.keys()].sort()).toEqual([1, 2, 3]);
      expect((await queries.amountsOf(ids)).get(3)).toEqual(EDGE_AMOUNTS);
    });

    it('reads amounts as numbers, one transaction’s or a batch’s', async () => {
      expect(await queries.amountsOf(1)).toEqual({
        sellingprice: 2850000.5,
        downpayment: 570000.1234,
        reservation: 25000,
        discount: 50000,
        miscellaneous: 142500.25,
        TotalPayments: 595000.1234,
      });
      expect(await queries.amountsOf(99)).toBeUndefined();
      const amounts = await queries.amountsOf([3, 2, 99]);
      expect([...amounts.keys()].sort()).toEqual([2, 3]);
      expect(amounts.get(3)).toEqual(EDGE_AMOUNTS);
      expect(amounts.get(2)).toEqual({
        sellingprice: null,
        downpayment: null,
        reservation: null,
        discount: null,
        miscellaneous: null,
        TotalPayments: null,
      });
    });

    it('walks the ids in key order, a batch after a key, up to a last key when given', async () => {
      expect(await queries.idsAfter(0, 10)).toEqual([1, 2, 3]);
      expect(await queries.idsAfter(0, 2)).toEqual([1, 2]);
      expect(await queries.idsAfter(1, 10, 2)).toEqual([2]);
      expect(await queries.idsAfter(3, 10)).toEqual([]);
      await expect(queries.idsAfter(0, 0)).rejects.toThrow(RangeError);
    });

    it('reads the chain as UpdateAgents committed it', async () => {
      await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ transaction_id: 1, financetype: 'Cash', salesagentid: 97 }))
        .expect(204);
      expect(await queries.agentChainOf(1)).toEqual({ ...CHAIN, salesagentid: 97 });
    });
  },
);
