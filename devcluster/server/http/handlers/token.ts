// POST serviceaccounts/<name>/token: a TokenRequest answered with a signed ServiceAccount token.
import { issueServiceAccountToken } from '../../../auth/index.js';
import { isJsonObject, text, type JsonObject } from '../../../../shared/kube/json.js';
import { sendJson } from '../answers.js';
import type { ResourceRequest } from '../types.js';

/** Answers the create of a TokenRequest: 201 with the token and its expiry (default 1 h). */
export function createToken(request: ResourceRequest, body: JsonObject): void {
  const { res, type, namespace, name, server } = request;
  const account = server.core.get(type, namespace, name);
  const spec = isJsonObject(body['spec']) ? body['spec'] : {};
  const seconds = typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : 3600;
  const issued = issueServiceAccountToken(
    server.signingKeyPem,
    { namespace, name, uid: text((account['metadata'] as JsonObject)['uid']) },
    seconds,
    new Date(),
  );
  sendJson(res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace, creationTimestamp: null },
    spec: { ...spec, expirationSeconds: seconds },
    status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
  });
}
