// Objects of the shared/api kinds as KubeClient serves them: the kind's zod-inferred type, plus
// what every served object has (apiVersion, kind, metadata: a KubeObject). Reads are narrowed to
// it, not parsed — `client.list<Served<ClusterServiceVersion>>(...)` — because the API server
// has validated the object against the CRD generated from the same schema. A Served object is a
// KubeObject, so it goes back into writes as it is.
import type { KubeObject } from './client.js';

/** An object of API type `T` as served (e.g. `Served<ClusterServiceVersion>`). */
export type Served<T extends object> = T & KubeObject;
