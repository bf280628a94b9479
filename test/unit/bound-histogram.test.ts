import test from 'ava';
import client from 'prom-client';
import { BoundHistogram } from '../../core/bound-histogram.ts';
import { createMetrics } from '../../core/metrics.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// Values on, between, below and above the bounds.
const VALUES = [0, 0.001, 0.005, 0.0051, 0.01, 0.3, 1, 2.4999, 29.9, 30, 31, 1000];

test('the exposition is the one prom-client writes for its own Histogram with the same observations', async (t) => {
  const theirs = new client.Registry();
  const ours = new client.Registry();
  const reference = new client.Histogram({ name: 'd_seconds', help: 'durations', labelNames: ['route', 'status'], buckets: BUCKETS, registers: [theirs] });
  const bound = new BoundHistogram('d_seconds', 'durations', ['route', 'status'], BUCKETS).registerIn(ours);
  // Series are listed in the order they first appear, as prom-client lists its own.
  const refused = bound.bind({ route: 'balance', status: '429' });
  const ok = bound.bind({ route: 'balance', status: '200' });
  for (const [i, v] of VALUES.entries()) {
    const status = i % 3 === 0 ? '429' : '200';
    reference.observe({ route: 'balance', status }, v);
    (status === '200' ? ok : refused)(v);
  }
  bound.observe({ route: 'tts', status: '202' }, 0.02);
  reference.observe({ route: 'tts', status: '202' }, 0.02);
  t.is(await ours.metrics(), await theirs.metrics());
});

test('an observer binds its series once: binding the same labels again counts into the same series', async (t) => {
  const registry = new client.Registry();
  const h = new BoundHistogram('x_seconds', 'x', ['route'], [1]).registerIn(registry);
  h.bind({ route: 'a' })(0.5);
  h.bind({ route: 'a' })(2);
  const text = await registry.metrics();
  t.regex(text, /x_seconds_bucket\{le="1",route="a"\} 1\n/);
  t.regex(text, /x_seconds_bucket\{le="\+Inf",route="a"\} 2\n/);
  t.regex(text, /x_seconds_count\{route="a"\} 2/);
});

test('reset zeroes every series, and observers bound before it keep counting', async (t) => {
  const registry = new client.Registry();
  const h = new BoundHistogram('y_seconds', 'y', ['route'], [1]).registerIn(registry);
  const observe = h.bind({ route: 'a' });
  observe(0.5);
  registry.resetMetrics();
  t.regex(await registry.metrics(), /y_seconds_count\{route="a"\} 0/);
  observe(0.5);
  t.regex(await registry.metrics(), /y_seconds_count\{route="a"\} 1/);
});

test('a value that is not a finite number is not counted', async (t) => {
  const registry = new client.Registry();
  const h = new BoundHistogram('z_seconds', 'z', ['route'], [1]).registerIn(registry);
  const observe = h.bind({ route: 'a' });
  observe(Number.NaN);
  observe(Number.POSITIVE_INFINITY);
  observe(0.1);
  t.regex(await registry.metrics(), /z_seconds_count\{route="a"\} 1/);
});

test('http_requests_in_flight is read at scrape time from what the API listener counts', async (t) => {
  const metrics = createMetrics(false);
  let open = 3;
  metrics.countInFlight(() => open);
  t.regex(await metrics.registry.metrics(), /http_requests_in_flight 3\n/);
  open = 0;
  t.regex(await metrics.registry.metrics(), /http_requests_in_flight 0\n/);
});
