// Contract types of storage: committed changes, the journal that makes them durable, and the
// watches that follow them.
import type { JsonObject } from '../../shared/kube/json.js';

/** What happened to an object. */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change; objects are never mutated once stored, so events share them. */
export interface ChangeEvent {
  rv: number;
  type: ChangeType;
  /** Storage key (see storageKey). */
  key: string;
  namespace: string;
  name: string;
  /** The object after the change (for DELETED: the last state, carrying the deletion rv). */
  object: JsonObject;
  /** The object before the change, for MODIFIED and DELETED. */
  previous?: JsonObject;
  /** The first watch line made of the event (UTF-8) and its key (event type and apiVersion). */
  line?: Buffer;
  lineKey?: string;
  /** Further watch lines by key: each encoded once and shared by every watcher. */
  cache?: Map<string, Buffer>;
}

/** A durable record sink: `append` queues, `flushed` resolves once everything queued is on disk. */
export interface Journal {
  append(event: ChangeEvent): void;
  flushed(): Promise<void>;
}

/** Receives every committed change, synchronously, in resourceVersion order. */
export type ChangeListener = (event: ChangeEvent) => void;

/** Outcome of asking for the events after a resourceVersion. */
export type EventsSince = { ok: true; events: ChangeEvent[] } | { ok: false; oldest: number };

/** Where a watch writes its newline-delimited JSON events. */
export interface WatchSink {
  /** One whole event line, newline included: text, or its UTF-8 bytes when shared by many watchers. */
  write(line: string | Buffer): void;
  /** Ends the stream (the client sees a clean end of the response). */
  end(): void;
}

/** Which objects a watch receives. */
export interface WatchFilter {
  /** Storage key of the resource watched (see storageKey). */
  key: string;
  /** apiVersion the objects are served at (CRD versions share storage). */
  apiVersion: string;
  /** Kind of the objects, for bookmarks. */
  kind: string;
  /** Only this namespace; undefined = all. */
  namespace: string | undefined;
  matches(object: JsonObject): boolean;
  /** Renders an object for this watcher alone (Table watches: rows depend on the request). */
  render?: (object: JsonObject) => JsonObject;
  /** A form shared with other watches (metadata-only watches), when not the plain object. */
  form?: WatchForm;
}

/**
 * How some watches present objects, alike for all of them: each event's line in this form is
 * encoded once and shared by every watcher using it, as plain lines are per apiVersion.
 */
export interface WatchForm {
  /** Names the form among an event's cached lines; one name per render function. */
  id: string;
  /** The object as sent (BOOKMARK objects too); depends on the object alone. */
  render(object: JsonObject): JsonObject;
}

/** Options of one watch request. */
export interface WatchOptions {
  /** Resume after this resourceVersion; undefined = send the current state first. */
  fromResourceVersion: number | undefined;
  allowBookmarks: boolean;
  timeoutSeconds: number | undefined;
  bookmarkIntervalMs: number;
}

/** An open watch; `close` stops it and ends its sink. */
export interface WatchHandle {
  close(): void;
}
