// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
// the leader renews spec.renewTime; a standby takes over once renewTime + leaseDuration has
// passed. Every write is conditional on the Lease's resourceVersion, so two candidates can
// never both believe they won.
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
  | { action: 'wait'; holder: string; expiresAt: Date };

/** Pure: given the current Lease (or none), what `identity` should do at `now`. */
export function decideLease(
  current: LeaseObject | undefined,
  where: { namespace: string; name: string },
  identity: string,
  now: Date,
  leaseDurationSeconds: number,
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
  const duration = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '') || 0;
  const expiresAt = new Date(renewed + duration);
  const holder = spec.holderIdentity ?? '';
  if (holder === identity) {
    return {
      action: 'renew',
      lease: { ...current, spec: { ...spec, leaseDurationSeconds, renewTime: stamp } },
    };
  }
  if (holder !== '' && expiresAt > now) return { action: 'wait', holder, expiresAt };
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
  lead: (leadership: AbortSignal) => Promise<void>,
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

  // One attempt to become or stay leader; true when we hold the lease afterwards.
  const attempt = async (): Promise<boolean> => {
    const current = await client.get<LeaseObject>(ref);
    const decision = decideLease(
      current,
      options,
      options.identity,
      new Date(),
      options.leaseDurationSeconds,
    );
    try {
      if (decision.action === 'wait') return false;
      if (decision.action === 'create') await client.create(decision.lease);
      else await client.update(decision.lease);
      if (decision.action !== 'renew') onTakeover();
      return true;
    } catch (error) {
      if (isConflict(error) || isAlreadyExists(error)) return false; // another candidate was faster
      throw error;
    }
  };

  while (!signal.aborted) {
    let leading = false;
    try {
      leading = await attempt();
    } catch (error) {
      log.warn({ err: error }, 'leader election: could not read or write the lease');
    }
    if (!leading) {
      await pause(options.retryIntervalMs);
      continue;
    }
    log.info(
      { identity: options.identity, lease: `${options.namespace}/${options.name}` },
      'became leader',
    );
    const leadership = new AbortController();
    const stopLeading = (): void => leadership.abort();
    signal.addEventListener('abort', stopLeading, { once: true });
    const work = lead(leadership.signal).catch((error: unknown) => {
      log.error({ err: error }, 'leader work failed; giving up leadership');
      leadership.abort();
    });
    // A failed renewal is retried until the renew deadline (2/3 of the lease); another holder
    // or a passed deadline ends leadership before the lease could expire under us.
    let renewedAt = Date.now();
    const renewDeadlineMs = (options.leaseDurationSeconds * 1000 * 2) / 3;
    while (!leadership.signal.aborted) {
      // Stopping (`signal`) aborts the leadership too, so one signal ends the wait.
      await pause(options.renewIntervalMs, leadership.signal);
      if (leadership.signal.aborted) break;
      let outcome: 'renewed' | 'lost' | 'error' = 'error';
      try {
        outcome = (await attempt()) ? 'renewed' : 'lost';
      } catch (error) {
        log.warn({ err: error }, 'leader election: renewal failed; retrying');
      }
      if (outcome === 'renewed') renewedAt = Date.now();
      if (outcome === 'lost' || Date.now() - renewedAt > renewDeadlineMs) {
        log.warn({ identity: options.identity }, 'lost leadership');
        leadership.abort();
      }
    }
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
