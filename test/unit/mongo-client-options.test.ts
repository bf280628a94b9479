import test from 'ava';
import { MONGO_SOCKET_TIMEOUT_MS, mongoClientOptions } from '../../core/kernel/runtime.ts';

/** core/kernel/runtime.ts: a MongoDB that stops answering fails operations after a bounded wait (503) instead of holding requests for good. */

test('an operation waits at most 30 s for MongoDB\'s reply unless MONGODB_URL says otherwise', (t) => {
  t.is(MONGO_SOCKET_TIMEOUT_MS, 30_000);
  t.deepEqual(mongoClientOptions('mongodb://db-0.db:27017/?replicaSet=rs0'), { socketTimeoutMS: 30_000 });
  t.deepEqual(mongoClientOptions('mongodb://db-0.db:27017/?replicaSet=rs0&socketTimeoutMS=5000'), {}, 'the URL\'s own setting wins');
  t.deepEqual(mongoClientOptions('mongodb+srv://cluster.example/?sockettimeoutms=0'), {}, 'in any letter case, 0 (no limit) included');
});
