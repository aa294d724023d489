// The function host's contract: what a function declares (definitions of work-key types,
// triggers, load → decide → apply) and what the host hands each reconcile. Modelled on
// controller-runtime's typed requests and Result: a definition reconciles one type of key,
// and follow-up work is part of a decision's result, published by the host.
import type { Logger } from 'pino';
import type { DeadLetterReason } from '../bus/dead-letters.js';
import type { ObjectPart } from '../bus/object-parts.js';
import type { ObjectRef } from '../bus/subjects.js';
import type { KubeClient } from '../kube/client.js';

/**
 * One type of work key: the queue that reconciles it (one function definition), and how a key
 * becomes the tokens of a work subject and back. Build one with `workKeyType` (work-keys.ts).
 */
export interface WorkKeyType<Key> {
  /** The queue, e.g. "resolve" or "rbac-namespace": names the definition and its consumers. */
  readonly queue: string;
  /**
   * Words of every key, when fixed: 0 (one key per cluster) makes the per-cluster work consumer
   * filter the cluster's one subject instead of the subjects below it.
   */
  readonly words?: number;
  /** The key as the words of its work subject. */
  encode(key: Key): readonly string[];
  /** Reverses encode; throws MalformedWorkKeyError for words encode cannot have produced. */
  decode(words: readonly string[]): Key;
  /** A follow-up naming `key` of this type, for a decision's `enqueue` or a trigger. */
  of(key: Key): WorkItem;
}

/** Work for some queue: a key of that queue's type, as words. Built by WorkKeyType.of. */
export interface WorkItem {
  readonly queue: string;
  readonly key: readonly string[];
  /**
   * For a decision's follow-up: what it is about (e.g. a digest of the inputs the target's
   * decision reads and does not watch). The host does not publish it again while the last one it
   * published for that key had the same basis: that pass came after these inputs.
   */
  readonly basis?: string;
}

/** One change of a mirrored object, as a trigger sees it. */
export interface ObjectChange {
  ref: ObjectRef;
  /** The object as mirrored (parsed JSON), or undefined when it was deleted. */
  object: unknown;
  /**
   * Whether the change may concern any of `parts`, judged as Trigger.parts is: against the last
   * version of the object this replica's trigger looked at (object-parts.ts). Always true for a
   * deletion, and for an object this replica has not looked at yet.
   */
  touches(parts: readonly ObjectPart[]): boolean;
  /**
   * Whether `value`, a view of the object the trigger derives (e.g. the class of a CSV's phase
   * its decision tells apart), may differ from the one this replica remembered for `view` when
   * it last looked at the object; remembered only once the change's work is published, so a
   * redelivered change is judged against the same version as before. Always true for a
   * deletion and for an object (or view) not remembered.
   */
  differs(view: string, value: string): boolean;
}

/**
 * Which changes start work, and which work they start: keys of the definition's own type, or
 * of other types of the same function (one consumer per kind serves them all).
 */
export interface Trigger {
  /** Kind whose changes start work, e.g. "Subscription". */
  kind: string;
  /** The work a change starts; none to ignore it. Async for fan-out (e.g. every namespace). */
  workKeys(change: ObjectChange): readonly WorkItem[] | Promise<readonly WorkItem[]>;
  /**
   * The parts of the object the function reads, when not all: a change that leaves all of them
   * as they were when this replica last looked at the object starts no work (deletions, and
   * objects it has not looked at, always do).
   */
  parts?: readonly ObjectPart[];
}

/** The time, as the host tells it to reconciles; injected so decisions are reproducible. */
export type Clock = () => Date;

/** What a reconcile is about, and what the host hands it. */
export interface WorkContext<Key> {
  cluster: string;
  key: Key;
  /** The API client of `cluster`; throws NoClusterClientError if this replica has none. */
  readonly client: KubeClient;
  /** The current time (decisions take it from their snapshot, never from `new Date()`). */
  now: Clock;
  /** Consecutive failures of this key before this attempt. */
  failures: number;
  log: Logger;
  /** Aborted when the host stops or the lease was lost; writes are still safe, but pointless. */
  signal: AbortSignal;
}

/** A decision: the writes to make, the follow-up work, and whether to look again later. */
export interface Decision<Writes> {
  writes: Writes;
  /**
   * Work to start once the writes landed (keys of this or another function, same cluster):
   * published by the host, never by the function.
   */
  enqueue?: readonly WorkItem[];
  /** Look at this key again after this many ms even if nothing changes (e.g. waiting for a Deployment). */
  requeueAfterMs?: number;
  /**
   * The writes let the key progress further at once (an object just created is what the next
   * step needs): load and decide again right away, within this lease, rather than waiting for
   * the writes to come back through the watcher. Only for functions whose load reads the API.
   */
  again?: boolean;
}

/** Work the host gave up on (it is dead-lettered), as a definition's giveUp sees it. */
export interface DeadWork {
  reason: DeadLetterReason;
  /** The last error's message. */
  message: string;
  /** The last error. */
  error: unknown;
  /** Consecutive failures. */
  failures: number;
}

/**
 * An olmq function definition, declared as data: the type of key it reconciles, its triggers,
 * and load → decide → apply. A function with several key types has one definition per type.
 */
export interface FunctionDefinition<Key, Snapshot, Writes> {
  /** The type of key it reconciles; its queue names the definition and its consumers. */
  key: WorkKeyType<Key>;
  triggers: readonly Trigger[];
  /** Reads what the decision needs (the mirror, or the API when it must be fresh). */
  load(work: WorkContext<Key>): Promise<Snapshot>;
  /** Pure: decides from the snapshot alone. */
  decide(snapshot: Snapshot): Decision<Writes>;
  /** Performs the writes; throws StaleDecisionError when the world changed under the decision. */
  apply(writes: Writes, work: WorkContext<Key>): Promise<void>;
  /**
   * Says on the key's object why its work was given up on — its status the way upstream words
   * such a failure, and an Event — so dead work is never silent. Called once per dead letter,
   * best effort (the host logs a failure); the key's next success undoes it as usual.
   */
  giveUp?(work: WorkContext<Key>, dead: DeadWork): Promise<void>;
  /**
   * Reconciles a key only once its work has been quiet this long (ms): an item younger than
   * that goes back to wait out the rest, and a newer item of the key replaces it (the work
   * stream keeps one per key). For decisions that sum up many objects changing together (an
   * Operator's components during an install), one pass at the end instead of one per change.
   */
  quietMs?: number;
}

/** Any definition, whatever its key, snapshot and writes (for hosts and function tables). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each definition has its own types
export type AnyFunctionDefinition = FunctionDefinition<any, any, any>;
