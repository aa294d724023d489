// Contract types of API aggregation: the front proxy's identity, the backends APIServices name,
// where they answer and what their Available condition says.

/** The front proxy's identity: its client certificate and the CA that signed it. */
export interface FrontProxyIdentity {
  caCertPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

/** One registered backend. */
export interface Backend {
  name: string;
  group: string;
  version: string;
  service: { namespace: string; name: string; port: number };
  caBundlePem: string | undefined;
  insecure: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
}

/** Where a backend answers, or why it does not. */
export type Resolution =
  { ok: true; host: string; port: number } | { ok: false; reason: string; message: string };

/** The Available condition of an APIService. */
export interface Availability {
  status: 'True' | 'False';
  reason: string;
  message: string;
}
