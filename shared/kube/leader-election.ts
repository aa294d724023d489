// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
// the leader renews spec.renewTime; a standby takes over once the Lease has not changed for
// leaseDurationSeconds on the standby's own clock. Timestamps in the Lease are written by the
// holder's clock and are never compared with ours: a skewed clock neither steals a live lease
// nor keeps a dead one. Every write is conditional on the Lease's resourceVersion, so two
// candidates can never both believe they won. spec.leaseTransitions counts takeovers: it is
// the leader's epoch, which fences a deposed leader's late writes (docs/backbone.md).
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { KubeClient, KubeObject } from './client.js';
import { isAlreadyExists, isConflict } from './errors.js';
import { kubeTime } from './time.js';

/** The Lease fields leader election uses. */
export interface LeaseObject extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** What a candidate should do with the Lease as it is now. */
export type LeaseDecision =
  | { action: 'create'; lease: LeaseObject }
  | { action: 'renew' | 'takeover'; lease: LeaseObject }
  | { action: 'wait'; holder: string; expiresInMs: number };

/** How the candidate itself has seen the Lease, on its own clock. */
export interface LeaseSighting {
  /** How long the Lease has been unchanged since this candidate first saw it as it is now. */
  unchangedForMs: number;
  /** This process holds the Lease now (it won or renewed it and has not lost it since). */
  holding: boolean;
}

/**
 * Pure: given the current Lease (or none), what `identity` should do. `now` only stamps what
 * we write; expiry is judged by `seen.unchangedForMs`, never by the holder's timestamps.
 */
export function decideLease(
  current: LeaseObject | undefined,
  where: { namespace: string; name: string },
  identity: string,
  now: Date,
  leaseDurationSeconds: number,
  seen: LeaseSighting,
): LeaseDecision {
  const stamp = kubeTime(now, 'micros');
  if (current === undefined) {
    return {
      action: 'create',
      lease: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: where.name, namespace: where.namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: stamp,
          renewTime: stamp,
          leaseTransitions: 0,
        },
      },
    };
  }
  const spec = current.spec ?? {};
  const holder = spec.holderIdentity ?? '';
  // Ours while we lead: renew. Ours from an earlier life of this identity (a restart): a new
  // term, so a new epoch, as if taken over.
  if (holder === identity && seen.holding) {
    return {
      action: 'renew',
      lease: { ...current, spec: { ...spec, leaseDurationSeconds, renewTime: stamp } },
    };
  }
  const expiresInMs =
    (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000 - seen.unchangedForMs;
  if (holder !== '' && holder !== identity && expiresInMs > 0)
    return { action: 'wait', holder, expiresInMs };
  return {
    action: 'takeover',
    lease: {
      ...current,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
      },
    },
  };
}

/** What a candidate remembers of the Lease: its record, and when (our clock) it last changed. */
export class LeaseWatch {
  #record: string | undefined;
  #changedAtMs = 0;

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** Notes the Lease as read now; returns how long it has been unchanged on our clock. */
  see(current: LeaseObject | undefined): number {
    const record =
      current === undefined ? '' : JSON.stringify([current.metadata.resourceVersion, current.spec]);
    const nowMs = this.clock();
    if (record !== this.#record) {
      this.#record = record;
      this.#changedAtMs = nowMs;
    }
    return nowMs - this.#changedAtMs;
  }
}

/** One term of leadership, handed to the leader's work. */
export interface LeaderTerm {
  /** The Lease's leaseTransitions when this term began: higher than any earlier term's. */
  epoch: number;
  /**
   * Whether the Lease was renewed within the renew deadline, on this process's monotonic clock.
   * False after a pause (GC, SIGSTOP) or a partition long enough for a standby to take over:
   * the leader must not write then, even before its renewal loop notices.
   */
  current: () => boolean;
}

/** Timing of leader election. */
export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** How often the leader renews (well below the lease duration). */
  renewIntervalMs: number;
  /** How often a standby checks whether the lease expired. */
  retryIntervalMs: number;
  /** Asked when the campaign stops: hand the Lease back (default) or let it expire. */
  releaseOnStop?: () => boolean;
  /** How long a stopping leader tries to hand the Lease back (default 5 s). */
  releaseTimeoutMs?: number;
}

/**
 * Campaigns for the Lease until `signal` aborts. While leading, `lead(leadership)` runs; its
 * signal aborts when leadership is lost (a renewal failed or found another holder), and the
 * campaign continues as a standby. `onTakeover` is told each time leadership changes hands.
 */
export async function campaign(
  client: KubeClient,
  options: LeaderElectionOptions,
  lead: (leadership: AbortSignal, term: LeaderTerm) => Promise<void>,
  log: Logger,
  signal: AbortSignal,
  onTakeover: () => void = () => undefined,
): Promise<void> {
  const ref = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    namespace: options.namespace,
    name: options.name,
  };
  // Each wait removes its abort listener when it ends: a leader renews for days, and a listener
  // left per wait piles up (MaxListenersExceededWarning, then memory).
  const pause = (ms: number, until: AbortSignal = signal): Promise<void> =>
    new Promise((resolve) => {
      if (until.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        until.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      until.addEventListener('abort', done, { once: true });
    });

  const watch = new LeaseWatch();
  let holding = false;
  // One attempt to become or stay leader: the epoch of the lease we hold afterwards, or
  // undefined when another candidate holds it.
  const attempt = async (): Promise<number | undefined> => {
    const current = await client.get<LeaseObject>(ref);
    const decision = decideLease(
      current,
      options,
      options.identity,
      new Date(),
      options.leaseDurationSeconds,
      { unchangedForMs: watch.see(current), holding },
    );
    try {
      if (decision.action === 'wait') return undefined;
      const written =
        decision.action === 'create'
          ? await client.create(decision.lease)
          : await client.update(decision.lease);
      watch.see(written);
      if (decision.action !== 'renew') onTakeover();
      return decision.lease.spec?.leaseTransitions ?? 0;
    } catch (error) {
      if (isConflict(error) || isAlreadyExists(error)) return undefined; // another was faster
      throw error;
    }
  };

  while (!signal.aborted) {
    let epoch: number | undefined;
    // Renewals are timed from before their request: the server may have written it any time
    // after that, so that is when our lease began to run (monotonic: wall-clock jumps ignored).
    let renewedAt = performance.now();
    try {
      epoch = await attempt();
    } catch (error) {
      log.warn({ err: error }, 'leader election: could not read or write the lease');
    }
    if (epoch === undefined) {
      await pause(options.retryIntervalMs);
      continue;
    }
    holding = true;
    log.info(
      { identity: options.identity, lease: `${options.namespace}/${options.name}`, epoch },
      'became leader',
    );
    // A failed renewal is retried until the renew deadline (2/3 of the lease); another holder
    // or a passed deadline ends leadership before a standby's clock can see the lease expire.
    const renewDeadlineMs = (options.leaseDurationSeconds * 1000 * 2) / 3;
    const leadership = new AbortController();
    const stopLeading = (): void => leadership.abort();
    signal.addEventListener('abort', stopLeading, { once: true });
    const term: LeaderTerm = {
      epoch,
      current: () => !leadership.signal.aborted && performance.now() - renewedAt <= renewDeadlineMs,
    };
    const work = lead(leadership.signal, term).catch((error: unknown) => {
      log.error({ err: error }, 'leader work failed; giving up leadership');
      leadership.abort();
    });
    while (!leadership.signal.aborted) {
      // Stopping (`signal`) aborts the leadership too, so one signal ends the wait.
      await pause(options.renewIntervalMs, leadership.signal);
      if (leadership.signal.aborted) break;
      let outcome: 'renewed' | 'lost' | 'error' = 'error';
      const sentAt = performance.now();
      try {
        outcome = (await attempt()) === undefined ? 'lost' : 'renewed';
      } catch (error) {
        log.warn({ err: error }, 'leader election: renewal failed; retrying');
      }
      // Past the deadline since the last renewal, the term is over even if this renewal then
      // landed: current() said so meanwhile, and its writers stopped (dropping what came); the
      // next term starts anew, with a new epoch.
      const lapsed = performance.now() - renewedAt > renewDeadlineMs;
      if (outcome === 'renewed' && !lapsed) renewedAt = sentAt;
      if (outcome === 'lost' || lapsed) {
        log.warn({ identity: options.identity }, 'lost leadership');
        leadership.abort();
      }
    }
    holding = false;
    signal.removeEventListener('abort', stopLeading);
    await work;
    if (signal.aborted && (options.releaseOnStop?.() ?? true)) {
      // Best effort, and bounded: an API server going away at the same time (everything shut
      // down together) must not hold up this shutdown; the lease then expires instead.
      const releaseTimeoutMs = options.releaseTimeoutMs ?? defaultReleaseTimeoutMs;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        release(client, ref, options.identity, log),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, releaseTimeoutMs))),
      ]);
      clearTimeout(timer);
    }
  }
}

/** How long a stopping leader tries to hand its Lease back, unless told otherwise. */
const defaultReleaseTimeoutMs = 2_000;

// On a clean shutdown the leader hands the Lease back (no holder), so a standby takes over at
// its next check instead of waiting for the lease to expire.
async function release(
  client: KubeClient,
  ref: { apiVersion: string; kind: string; namespace: string; name: string },
  identity: string,
  log: Logger,
): Promise<void> {
  try {
    const current = await client.get<LeaseObject>(ref);
    if (current?.spec?.holderIdentity !== identity) return;
    await client.update({
      ...current,
      spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1 },
    });
    log.info({ identity }, 'released leadership');
  } catch (error) {
    log.warn({ err: error }, 'could not release the lease; a standby takes over when it expires');
  }
}
