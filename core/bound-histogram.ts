import type client from 'prom-client';

/** Records one value in the series it was bound to. */
export type Observe = (value: number) => void;

/** One line of the exposition, as prom-client's registry reads it from `get()`. */
interface Sample {
  metricName: string;
  labels: Readonly<Record<string, string | number>>;
  value: number;
}

interface Series {
  readonly labels: Readonly<Record<string, string>>;
  /** per upper bound, not cumulative; the exposition adds them up */
  readonly counts: number[];
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram whose label sets are bound once: `bind(labels)`
 * returns the observer of that series, and each observation is then a bucket
 * search and three additions. prom-client's `Histogram.observe` checks,
 * sorts and hashes the labels on every call (even through `labels()`), which
 * measured 3 to 7 µs per request on the API's hottest path, where the route's
 * duration is recorded for every request (test/bench/api-throughput.ts). It
 * registers in a prom-client registry like any of its metrics and is exposed
 * in the same format: cumulative `_bucket` lines with `le`, `+Inf`, `_sum`
 * and `_count`.
 */
export class BoundHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator: client.Aggregator = 'sum';
  private readonly series = new Map<string, Series>();
  private readonly upperBounds: readonly number[];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    upperBounds: readonly number[],
  ) {
    this.upperBounds = [...upperBounds].sort((a, b) => a - b);
  }

  /** The observer of one label set; resolve it once (per route and status, say) and call it per request. */
  bind(labels: Readonly<Record<L, string>>): Observe {
    const key = this.labelNames.map((name) => labels[name]).join('\u0000');
    let series = this.series.get(key);
    if (!series) {
      const own = Object.fromEntries(this.labelNames.map((name) => [name, String(labels[name])]));
      this.series.set(key, (series = { labels: own, counts: this.upperBounds.map(() => 0), sum: 0, count: 0 }));
    }
    const found = series;
    const bounds = this.upperBounds;
    return (value) => {
      if (!Number.isFinite(value)) return;
      let i = 0;
      while (i < bounds.length && value > bounds[i]!) i++;
      if (i < bounds.length) found.counts[i]!++;
      found.sum += value;
      found.count++;
    };
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    this.bind(labels)(value);
  }

  /** prom-client's registry reads this on every scrape. */
  get(): { name: string; help: string; type: 'histogram'; aggregator: client.Aggregator; values: Sample[] } {
    const values: Sample[] = [];
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += series.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...series.labels }, value: cumulative });
      });
      values.push(
        { metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count },
        { metricName: `${this.name}_sum`, labels: series.labels, value: series.sum },
        { metricName: `${this.name}_count`, labels: series.labels, value: series.count },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Zeroes every series in place: observers already bound keep counting into them. */
  reset(): void {
    for (const series of this.series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** Adds it to a prom-client registry, which serves it with the others. */
  registerIn(registry: client.Registry): this {
    // The registry reads only name, help, type, aggregator, get() and reset(); its type lists prom-client's own classes.
    registry.registerMetric(this as unknown as client.Metric);
    return this;
  }
}
