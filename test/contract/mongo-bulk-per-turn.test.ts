import test from 'ava';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { unorderedBulkPerTurn } from '../../core/adapters/documents/mongo-bulk-per-turn.ts';

const mongoUrl = process.env.MONGODB_URL;
if (mongoUrl) {
  const client = new MongoClient(mongoUrl);
  test.after.always(() => client.close());
  const collection = async () => {
    const name = `contract_bulk_${randomUUID().slice(0, 8)}`;
    const db = client.db(name);
    return { docs: db.collection<{ _id: string; n: number }>('counters'), drop: () => db.dropDatabase() };
  };

  test('mongo: the statements of one turn are one bulk write, and each caller gets its own statements\' outcomes', async (t) => {
    const { docs, drop } = await collection();
    t.teardown(drop);
    await docs.insertOne({ _id: 'taken', n: 0 });
    const commands: string[] = [];
    const bulk = unorderedBulkPerTurn(docs);
    const watched = new MongoClient(mongoUrl, { monitorCommands: true });
    watched.on('commandStarted', (e) => commands.push(e.commandName));
    const watchedBulk = unorderedBulkPerTurn(watched.db(docs.dbName).collection<{ _id: string; n: number }>('counters'));
    t.teardown(() => watched.close());

    const [first, second, third] = await Promise.all([
      watchedBulk([{ insertOne: { document: { _id: 'a', n: 1 } } }, { insertOne: { document: { _id: 'taken', n: 9 } } }]),
      watchedBulk([{ updateOne: { filter: { _id: 'a' }, update: { $inc: { n: 1 } } } }]),
      watchedBulk([{ insertOne: { document: { _id: 'a', n: 5 } } }, { insertOne: { document: { _id: 'b', n: 1 } } }]),
    ]);
    // The driver sends a bulk write's inserts and its updates as one command each.
    t.deepEqual(commands.filter((c) => c === 'insert' || c === 'update').sort(), ['insert', 'update'], 'one command of each kind for the three callers');
    t.is(first[0], null);
    t.is(first[1]?.code, 11000, 'the duplicate key goes back to the statement that collided');
    t.is(second[0], null);
    t.is(third[0]?.code, 11000);
    t.is(third[1], null);
    t.deepEqual(await docs.find({}).sort({ _id: 1 }).toArray(), [{ _id: 'a', n: 2 }, { _id: 'b', n: 1 }, { _id: 'taken', n: 0 }]);

    // A failure that is no statement's own fails every caller of its command, and the next turn writes afresh.
    await watched.close();
    const closed = await Promise.allSettled([watchedBulk([{ insertOne: { document: { _id: 'c', n: 1 } } }]), watchedBulk([{ insertOne: { document: { _id: 'd', n: 1 } } }])]);
    t.deepEqual(closed.map((r) => r.status), ['rejected', 'rejected']);
    t.deepEqual(await bulk([{ insertOne: { document: { _id: 'c', n: 1 } } }]), [null]);
  });
} else {
  console.log('mongo bulk-per-turn contract: skipped, MONGODB_URL is not set');
}
