import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one server instance (a registry per app, so tests can build many). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'umbra_http_requests_total', help: 'HTTP requests by operation and status', labelNames: ['operation', 'status'] as const, registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'umbra_http_request_duration_seconds',
    help: 'HTTP request latency by operation and status',
    labelNames: ['operation', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly creditsCharged = new Counter({ name: 'umbra_credits_charged_total', help: 'Lookup credits charged', labelNames: ['operation'] as const, registers: [this.registry] });
  readonly rateLimited = new Counter({ name: 'umbra_rate_limited_total', help: 'Requests refused by a rate bucket', labelNames: ['operation', 'bucket'] as const, registers: [this.registry] });

  private readonly children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  private readonly charged = new Map<string, { inc(n: number): void }>();

  /** Counts one request and its latency; label children are cached because label hashing is the costly part. */
  observe(operation: string, status: number, seconds: number): void {
    const key = `${operation} ${status}`;
    let c = this.children.get(key);
    if (!c) {
      const labels = { operation, status: String(status) };
      c = { count: this.requests.labels(labels), time: this.latency.labels(labels) };
      this.children.set(key, c);
    }
    c.count.inc();
    c.time.observe(seconds);
  }

  /** Counts credits charged by an operation, through a cached label child. */
  charge(operation: string, credits: number): void {
    let c = this.charged.get(operation);
    if (!c) {
      c = this.creditsCharged.labels({ operation });
      this.charged.set(operation, c);
    }
    c.inc(credits);
  }

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'umbra_' });
  }
}
