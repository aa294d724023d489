// Prometheus metrics of olmq processes. Every series carries `cluster` (and, for function
// work, `function`) so one dashboard can show a whole fleet.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { fencedWriteListeners } from '../bus/fencing.js';

/** A process-wide registry with Node's default process metrics. */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Metrics of the function host, labelled by cluster and function. */
export interface FunctionMetrics {
  processed: Counter<'cluster' | 'function' | 'outcome'>;
  retried: Counter<'cluster' | 'function'>;
  /** By reason: one of deadLetterReasons (shared/bus/dead-letters.ts). */
  deadLettered: Counter<'cluster' | 'function' | 'reason'>;
  /** Dead letters given another go, by cause: change (of the object), schedule. */
  redriven: Counter<'cluster' | 'function' | 'cause'>;
  /** Dead letters waiting, read from JetStream at scrape time; see addDeadLetterSource. */
  deadLetters: Gauge<'cluster' | 'function'>;
  /** Registers a reader of one function's dead letters per cluster, called at each scrape. */
  addDeadLetterSource(source: DeadLetterSource): void;
  writeConflicts: Counter<'cluster' | 'function'>;
  leaseContended: Counter<'cluster' | 'function'>;
  reconcileDuration: Histogram<'cluster' | 'function'>;
  /** Consumer backlog gauges, read from JetStream at scrape time; see addBacklogSource. */
  backlog: Gauge<'function' | 'consumer' | 'state'>;
  /** Registers a reader of consumer state, called at each scrape. */
  addBacklogSource(source: BacklogSource): void;
}

/** Reads one consumer's backlog: pending (not yet delivered) and in flight (delivered, unacknowledged). */
export type BacklogSource = () => Promise<
  { function: string; consumer: string; pending: number; inFlight: number }[]
>;

/** Reads one function's dead letters per cluster. */
export type DeadLetterSource = () => Promise<{ function: string; counts: Map<string, number> }>;

/** Registers the function host's metrics in `registry`. */
export function createFunctionMetrics(registry: Registry): FunctionMetrics {
  const labelNames = ['cluster', 'function'] as const;
  createFencedWriteCounter(registry);
  const sources: BacklogSource[] = [];
  const letterSources: DeadLetterSource[] = [];
  return {
    deadLetters: new Gauge({
      name: 'olmq_dead_letters',
      help: 'Dead letters waiting in OLMQ_DEAD (work given up on, not handled yet), per function.',
      labelNames,
      registers: [registry],
      async collect() {
        const readings = await Promise.all(
          letterSources.map((read) => read().catch(() => undefined)),
        );
        this.reset();
        for (const r of readings) {
          if (r === undefined) continue;
          for (const [cluster, n] of r.counts) this.set({ cluster, function: r.function }, n);
        }
      },
    }),
    addDeadLetterSource(source) {
      letterSources.push(source);
    },
    redriven: new Counter({
      name: 'olmq_dead_letters_redriven_total',
      help: 'Dead letters given another go by the function host, by cause (change: its object changed; schedule: the redrive backoff elapsed).',
      labelNames: [...labelNames, 'cause'],
      registers: [registry],
    }),
    backlog: new Gauge({
      name: 'olmq_consumer_backlog',
      help: 'JetStream consumer backlog per function: state="pending" is queue depth / lag (not yet delivered), state="in_flight" is delivered but not acknowledged.',
      labelNames: ['function', 'consumer', 'state'],
      registers: [registry],
      async collect() {
        const readings = await Promise.all(
          sources.map((read) => read().catch(() => [])), // an unreachable server just leaves gaps
        );
        for (const r of readings.flat()) {
          this.set({ function: r.function, consumer: r.consumer, state: 'pending' }, r.pending);
          this.set({ function: r.function, consumer: r.consumer, state: 'in_flight' }, r.inFlight);
        }
      },
    }),
    addBacklogSource(source) {
      sources.push(source);
    },
    processed: new Counter({
      name: 'olmq_work_processed_total',
      help: 'Work items reconciled, by outcome (success, failure, unavailable: the API was unreachable or throttling).',
      labelNames: [...labelNames, 'outcome'],
      registers: [registry],
    }),
    retried: new Counter({
      name: 'olmq_work_retried_total',
      help: 'Work items scheduled for another attempt after a failure.',
      labelNames,
      registers: [registry],
    }),
    deadLettered: new Counter({
      name: 'olmq_work_dead_lettered_total',
      help: 'Work given up on and moved to the dead-letter stream, by reason (Permanent, TooManyFailures, TriggerFailed).',
      labelNames: [...labelNames, 'reason'],
      registers: [registry],
    }),
    writeConflicts: new Counter({
      name: 'olmq_write_conflicts_total',
      help: 'Writes refused because the object changed since the decision (re-decided).',
      labelNames,
      registers: [registry],
    }),
    leaseContended: new Counter({
      name: 'olmq_work_lease_contended_total',
      help: 'Work items deferred because another replica was working the same key.',
      labelNames,
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'olmq_reconcile_duration_seconds',
      help: 'Time to load, decide and apply one work item.',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

/** Counter of Kubernetes API requests by cluster, verb and HTTP code (for KubeClient). */
export function createApiRequestCounter(registry: Registry): Counter<'cluster' | 'verb' | 'code'> {
  const existing = registry.getSingleMetric('olmq_api_requests_total');
  if (existing !== undefined) return existing as Counter<'cluster' | 'verb' | 'code'>;
  return new Counter({
    name: 'olmq_api_requests_total',
    help: 'Kubernetes API requests by cluster, verb and HTTP status code ("error" when no answer came).',
    labelNames: ['cluster', 'verb', 'code'],
    registers: [registry],
  });
}

/**
 * Counter of mirror writes refused because a deposed watcher made them (shared/bus/fencing.ts),
 * by cluster and by who refused them (trigger, read, view, watcher); one per registry.
 */
export function createFencedWriteCounter(registry: Registry): Counter<'cluster' | 'reader'> {
  const existing = registry.getSingleMetric('olmq_mirror_fenced_writes_total');
  if (existing !== undefined) return existing as Counter<'cluster' | 'reader'>;
  const counter = new Counter({
    name: 'olmq_mirror_fenced_writes_total',
    help: 'Mirror writes of a deposed watcher (lower Lease epoch) refused, by who refused them: trigger, read, view, or watcher (written over by the active one).',
    labelNames: ['cluster', 'reader'],
    registers: [registry],
  });
  fencedWriteListeners.add((write) => counter.inc(write));
  return counter;
}

/** What a NATS connection has carried so far (`nc.stats()`). */
export interface NatsMessageStats {
  inMsgs: number;
  outMsgs: number;
}

/**
 * Counter of the messages this process's NATS connection received (`direction="in"`) and sent
 * (`"out"`), read from the connection at scrape time: what each process costs the NATS server.
 * One per registry (a second connection of the same process adds to it).
 */
export function createNatsMessageCounter(
  registry: Registry,
  stats: () => NatsMessageStats,
): Counter<'direction'> {
  const sources = natsSources.get(registry) ?? [];
  natsSources.set(registry, [...sources, stats]);
  const existing = registry.getSingleMetric('olmq_nats_messages_total');
  if (existing !== undefined) return existing as Counter<'direction'>;
  return new Counter({
    name: 'olmq_nats_messages_total',
    help: "Messages this process's NATS connection received (direction=in) and sent (direction=out).",
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      let inMsgs = 0;
      let outMsgs = 0;
      for (const read of natsSources.get(registry) ?? []) {
        const s = read();
        inMsgs += s.inMsgs;
        outMsgs += s.outMsgs;
      }
      // The connection keeps the running totals; the counter only reports them.
      this.reset();
      this.inc({ direction: 'in' }, inMsgs);
      this.inc({ direction: 'out' }, outMsgs);
    },
  });
}

const natsSources = new WeakMap<Registry, (() => NatsMessageStats)[]>();
