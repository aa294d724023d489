// POST serviceaccounts/<name>/token: a TokenRequest answered with a signed ServiceAccount token.
import { issueServiceAccountToken } from '../../../auth/index.js';
import { invalid } from '../../../api/errors.js';
import { isJsonObject, text, type JsonObject } from '../../../../shared/kube/json.js';
import { causeTypes, type StatusCause } from '../../../../shared/kube/status.js';
import { sendJson } from '../answers.js';
import type { ResourceRequest } from '../types.js';

/** Bounds of spec.expirationSeconds (kube's ValidateTokenRequest): 10 minutes to 2^32 s. */
const minExpirationSeconds = 10 * 60;
const maxExpirationSeconds = 2 ** 32;

function expirationCauses(seconds: number): StatusCause[] {
  const cause = (why: string): StatusCause => ({
    type: causeTypes.FieldValueInvalid,
    message: `Invalid value: ${seconds}: ${why}`,
    field: 'spec.expirationSeconds',
  });
  const causes: StatusCause[] = [];
  if (seconds < minExpirationSeconds)
    causes.push(cause('may not specify a duration less than 10 minutes'));
  if (seconds > maxExpirationSeconds)
    causes.push(cause('may not specify a duration larger than 2^32 seconds'));
  return causes;
}

/** Answers the create of a TokenRequest: 201 with the token and its expiry (default 1 h). */
export function createToken(request: ResourceRequest, body: JsonObject): void {
  const { res, type, namespace, name, server } = request;
  const account = server.core.get(type, namespace, name);
  const spec = isJsonObject(body['spec']) ? body['spec'] : {};
  const seconds = typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : 3600;
  const causes = expirationCauses(seconds);
  // kube names no object in this error: the TokenRequest is validated before it gets one.
  if (causes.length > 0)
    throw invalid(
      { group: 'authentication.k8s.io', resource: 'tokenrequests', kind: 'TokenRequest', name: '' },
      causes,
    );
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
