import client from 'prom-client';
import { BoundHistogram } from './bound-histogram.ts';

/** Prometheus metrics shared by every role; scraped at GET /metrics. */
export interface Metrics {
  registry: client.Registry;
  /** bind a route's series once (core/http/route-pipeline.ts does, per status) and observe per request */
  httpDuration: BoundHistogram<'route' | 'method' | 'status'>;
  /** where `http_requests_in_flight` (requests whose response has not ended) is read from (the API listener's drain); read at scrape time, so requests pay nothing */
  countInFlight(read: () => number): void;
  tokensCharged: client.Counter<'route'>;
  tokensRefunded: client.Counter<'route'>;
  busPublished: client.Counter<'topic'>;
  busConsumed: client.Counter<'topic' | 'group'>;
  busLag: client.Gauge<'topic' | 'group'>;
  jobsFinished: client.Counter<'status'>;
  webhookDeliveries: client.Counter<'result'>;
  /** deliveries that became DEAD (every attempt failed, or the endpoint went away): never resent */
  webhookDeliveriesDead: client.Counter<string>;
  /** open-stream slots taken in the service-wide pool (read from the counters store at scrape time) */
  streamSlotsInUse: client.Gauge<string>;
  /** STREAM_CAPACITY, so a panel can show the pool's use as a share */
  streamSlotsCapacity: client.Gauge<string>;
  /** `POST /tts` jobs queued or rendering: what QUEUE_MAX_DEPTH limits (read at scrape time) */
  queueDepth: client.Gauge<string>;
  /** requests the edge limits refused per source address (`zone` api or stream, `limit` rate or connections) */
  edgeRefusals: client.Counter<'zone' | 'limit'>;
  /** events the usage aggregator wrote to the analytics store, by kind (`outcome`, `job_close`) */
  usageEventsWritten: client.Counter<'kind'>;
  /** runs `collect` before every scrape (gauges read from elsewhere: consumer lag, stream slots, queue depth) */
  registerCollector(collect: () => Promise<void>): void;
}

export function createMetrics(withDefaults = true): Metrics {
  const registry = new client.Registry();
  if (withDefaults) client.collectDefaultMetrics({ register: registry });
  const collectors: Array<() => Promise<void>> = [];
  // Gauges fed by collectors are read concurrently during one scrape: they share one run of the collectors,
  // and a collector that fails leaves its gauges at their last value instead of failing the scrape.
  let running: Promise<void> | null = null;
  const collect = async () => {
    running ??= Promise.allSettled(collectors.map((c) => c())).then(() => {
      running = null;
    });
    await running;
  };
  let inFlight: (() => number) | null = null;
  // Set only at scrape time, from the count countInFlight names: nothing else writes it.
  new client.Gauge({
    name: 'http_requests_in_flight', help: 'Requests being served', registers: [registry],
    collect() {
      if (inFlight) this.set(inFlight());
    },
  });
  return {
    registry,
    registerCollector: (collector) => void collectors.push(collector),
    httpDuration: new BoundHistogram(
      'http_request_duration_seconds',
      'HTTP request duration by logical route and status',
      ['route', 'method', 'status'],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    ).registerIn(registry),
    countInFlight: (read) => {
      inFlight = read;
    },
    tokensCharged: new client.Counter({ name: 'tokens_charged_total', help: 'Tokens charged', labelNames: ['route'], registers: [registry] }),
    tokensRefunded: new client.Counter({ name: 'tokens_refunded_total', help: 'Tokens refunded', labelNames: ['route'], registers: [registry] }),
    busPublished: new client.Counter({ name: 'bus_published_total', help: 'Messages published', labelNames: ['topic'], registers: [registry] }),
    busConsumed: new client.Counter({ name: 'bus_consumed_total', help: 'Messages handled', labelNames: ['topic', 'group'], registers: [registry] }),
    busLag: new client.Gauge({
      name: 'bus_consumer_lag', help: 'Messages not yet committed by a group', labelNames: ['topic', 'group'], registers: [registry],
      collect,
    }),
    jobsFinished: new client.Counter({ name: 'tts_jobs_finished_total', help: 'Jobs finished', labelNames: ['status'], registers: [registry] }),
    webhookDeliveries: new client.Counter({ name: 'webhook_delivery_attempts_total', help: 'Webhook delivery attempts', labelNames: ['result'], registers: [registry] }),
    webhookDeliveriesDead: new client.Counter({ name: 'webhook_deliveries_dead_total', help: 'Webhook deliveries that became DEAD', registers: [registry] }),
    streamSlotsInUse: new client.Gauge({ name: 'stream_slots_in_use', help: 'Open-stream slots taken in the service-wide pool', registers: [registry], collect }),
    streamSlotsCapacity: new client.Gauge({ name: 'stream_slots_capacity', help: 'Open-stream slots of the service (STREAM_CAPACITY)', registers: [registry] }),
    queueDepth: new client.Gauge({ name: 'tts_queue_depth', help: 'Jobs queued or rendering (limited by QUEUE_MAX_DEPTH)', registers: [registry], collect }),
    edgeRefusals: new client.Counter({ name: 'edge_refusals_total', help: 'Requests refused by the per-address edge limits', labelNames: ['zone', 'limit'], registers: [registry] }),
    usageEventsWritten: new client.Counter({ name: 'usage_events_written_total', help: 'Events the usage aggregator wrote to analytics', labelNames: ['kind'], registers: [registry] }),
  };
}
