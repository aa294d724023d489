// The admin kubeconfig of a devcluster: its CA, an admin client certificate, one context.
import { stringify } from 'yaml';

/** Name of the context (and cluster) in generated kubeconfigs. */
export const contextName = 'olmq-devcluster';

/** What an admin kubeconfig holds. */
export interface KubeconfigInput {
  server: string;
  caCertPem: string;
  clientCertPem: string;
  clientKeyPem: string;
}

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

/** Renders the kubeconfig YAML. */
export function renderKubeconfig(input: KubeconfigInput): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: contextName,
        cluster: { server: input.server, 'certificate-authority-data': b64(input.caCertPem) },
      },
    ],
    users: [
      {
        name: `${contextName}-admin`,
        user: {
          'client-certificate-data': b64(input.clientCertPem),
          'client-key-data': b64(input.clientKeyPem),
        },
      },
    ],
    contexts: [
      { name: contextName, context: { cluster: contextName, user: `${contextName}-admin` } },
    ],
    'current-context': contextName,
    preferences: {},
  });
}
