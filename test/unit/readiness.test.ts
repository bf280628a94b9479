import test from 'ava';
import { Readiness } from '../../core/http/probes.ts';

/** README Distributed deployment, /readyz: what the process rides through (Redis, ClickHouse) does not take it out of its Service. */
const failing = async () => { throw new Error('connect ECONNREFUSED 127.0.0.1:6379'); };

test('a degradable check that fails leaves the process ready, status "degraded", and says which and why', async (t) => {
  const readiness = new Readiness();
  readiness.add({ name: 'documents', check: async () => {} });
  readiness.add({ name: 'counters', degradable: true, ping: true, check: failing });
  readiness.set(true);
  const { ready, body } = await readiness.report();
  t.true(ready);
  t.deepEqual(body, { status: 'degraded', checks: { documents: 'ok', counters: 'degraded, unreachable: connect ECONNREFUSED 127.0.0.1:6379' } });
});

test('a check that is not degradable fails readiness, whatever else is degraded; shutdown wins over both', async (t) => {
  const readiness = new Readiness();
  readiness.add({ name: 'documents', check: failing });
  readiness.add({ name: 'analytics', degradable: true, check: failing });
  readiness.set(true);
  t.like(await readiness.report(), { ready: false, body: { status: 'not_ready' } });
  readiness.set(false);
  t.like(await readiness.report(), { ready: false, body: { status: 'shutting_down' } });
});

test('every check answering is "ready"', async (t) => {
  const readiness = new Readiness();
  readiness.add({ name: 'counters', degradable: true, check: async () => {} });
  readiness.set(true);
  t.like(await readiness.report(), { ready: true, body: { status: 'ready', checks: { counters: 'ok' } } });
});
