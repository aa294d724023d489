// The shapes the API of a cluster exchanges with olmq: objects, references, lists, watch
// events, and the queries and answers of writes.

/** The fields of any Kubernetes object olmq relies on. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }[];
    finalizers?: string[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** Names one object (or, without name, a collection). */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name?: string | undefined;
}

/** A served resource, as discovery describes it. */
export interface ResourceInfo {
  /** Plural resource name in URLs, e.g. "clusterserviceversions". */
  plural: string;
  namespaced: boolean;
}

/** How a PATCH body is to be read. */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

/** Query of a create, update or status update. */
export interface WriteQuery {
  fieldManager?: string;
}

/** Query of a patch. */
export interface PatchQuery extends WriteQuery {
  force?: boolean;
  subresource?: string;
}

/**
 * Asks for the written object's metadata alone, as kube-apiserver answers any request that
 * accepts PartialObjectMetadata: for writers that read nothing else of the answer, serialising,
 * sending and parsing the whole object again costs more than the write itself.
 */
export interface MetadataAnswer {
  answer: 'metadata';
}

/** The answer of a write made with MetadataAnswer. */
export interface PartialObjectMetadata {
  apiVersion: string;
  kind: 'PartialObjectMetadata';
  metadata: KubeObject['metadata'];
}

/** One event of a watch; ERROR carries a Status (410 Gone: the resourceVersion is too old). */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

/** A running watch. */
export interface WatchStream {
  /** Resolves when the watch ends normally (the server's timeout, or stop()); rejects if it broke off. */
  ended: Promise<void>;
  stop(): void;
}

/** A list answer. */
export interface ObjectList<T> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}
