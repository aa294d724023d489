// Whether a failure means NATS could not be reached or could not answer for a moment: a server
// killed or restarting, a stream or KV bucket electing a new leader ("no responders", JetStream's
// 503), a request that timed out or was cut by a disconnect. Such a failure says nothing about
// the work, so it is retried without counting toward a dead letter, as an unreachable
// Kubernetes API is (shared/kube/errors.ts isTransientApiFailure).
import { JetStreamApiError } from '@nats-io/jetstream';
import {
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { MirrorViewLagError } from './mirror-view.js';
import { BusRequestError } from './pipe.js';

// JetStream's "temporarily unavailable" family: no leader yet, no quorum, cluster catching up.
const jetStreamUnavailable = 503;

function isUnavailable(error: Error): boolean {
  return (
    error instanceof BusRequestError ||
    // A live view or copy of the mirror that could not catch up with NATS in time.
    error instanceof MirrorViewLagError ||
    error instanceof NoRespondersError ||
    error instanceof TimeoutError ||
    error instanceof ConnectionError ||
    error instanceof DrainingConnectionError ||
    (error instanceof RequestError && error.isNoResponders()) ||
    (error instanceof JetStreamApiError && error.status === jetStreamUnavailable)
  );
}

/** True when an error (or one of its causes) says NATS was unreachable or busy electing. */
export function isBackboneUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (isUnavailable(e)) return true;
  }
  return false;
}
