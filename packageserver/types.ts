// The package server's contract types: how it is started, where it is registered, what runs.
import type { Logger } from 'pino';
import type { Backbone } from '../shared/bus/backbone.js';
import type { KubeClient } from '../shared/kube/client.js';

/** Where the package API is registered: its Service (and, for local servers, Endpoints). */
export interface PackageServiceRef {
  /** Namespace of the Service (default olmq-system). */
  namespace: string;
  /** Name of the Service (default packageserver). */
  name: string;
}

/** Options of startPackageServer. */
export interface PackageServerOptions {
  backbone: Backbone;
  /** Cluster id whose catalogs are served. */
  cluster: string;
  /** Client of that cluster (request-header settings, SubjectAccessReviews). */
  client: KubeClient;
  log: Logger;
  /** The global catalog namespace (upstream: olm). */
  globalNamespace: string;
  /** Listen address (default 127.0.0.1) and port (default 0: any free port). */
  host?: string;
  port?: number;
  /** Serving certificate and key (PEM); self-signed for the Service's DNS names when absent. */
  serving?: { certPem: string; keyPem: string };
  /** The Service clients reach it through (names in the self-signed certificate). */
  service?: PackageServiceRef;
}

/** A running package server. */
export interface PackageServer {
  /** host:port it listens on. */
  address: string;
  host: string;
  port: number;
  /** CA of the serving certificate when self-signed (for the APIService caBundle). */
  caBundlePem: string | undefined;
  /** Whether every catalog has been loaded once. */
  ready(): boolean;
  close(): Promise<void>;
}
