import client from 'prom-client';

/** Prometheus metrics shared by every role; scraped at GET /metrics. */
export interface Metrics {
  registry: client.Registry;
  httpDuration: client.Histogram<'route' | 'method' | 'status'>;
  httpInFlight: client.Gauge<string>;
  tokensCharged: client.Counter<'route'>;
  tokensRefunded: client.Counter<'route'>;
  busPublished: client.Counter<'topic'>;
  busConsumed: client.Counter<'topic' | 'group'>;
  busLag: client.Gauge<'topic' | 'group'>;
  jobsFinished: client.Counter<'status'>;
  webhookDeliveries: client.Counter<'result'>;
  /** runs `collect` before every scrape (gauges read from elsewhere, such as consumer lag) */
  registerCollector(collect: () => Promise<void>): void;
}

export function createMetrics(withDefaults = true): Metrics {
  const registry = new client.Registry();
  if (withDefaults) client.collectDefaultMetrics({ register: registry });
  const collectors: Array<() => Promise<void>> = [];
  return {
    registry,
    registerCollector: (collect) => void collectors.push(collect),
    httpDuration: new client.Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by logical route and status',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    httpInFlight: new client.Gauge({ name: 'http_requests_in_flight', help: 'Requests being served', registers: [registry] }),
    tokensCharged: new client.Counter({ name: 'tokens_charged_total', help: 'Tokens charged', labelNames: ['route'], registers: [registry] }),
    tokensRefunded: new client.Counter({ name: 'tokens_refunded_total', help: 'Tokens refunded', labelNames: ['route'], registers: [registry] }),
    busPublished: new client.Counter({ name: 'bus_published_total', help: 'Messages published', labelNames: ['topic'], registers: [registry] }),
    busConsumed: new client.Counter({ name: 'bus_consumed_total', help: 'Messages handled', labelNames: ['topic', 'group'], registers: [registry] }),
    busLag: new client.Gauge({
      name: 'bus_consumer_lag', help: 'Messages not yet committed by a group', labelNames: ['topic', 'group'], registers: [registry],
      async collect() {
        await Promise.all(collectors.map((c) => c()));
      },
    }),
    jobsFinished: new client.Counter({ name: 'tts_jobs_finished_total', help: 'Jobs finished', labelNames: ['status'], registers: [registry] }),
    webhookDeliveries: new client.Counter({ name: 'webhook_delivery_attempts_total', help: 'Webhook delivery attempts', labelNames: ['result'], registers: [registry] }),
  };
}
