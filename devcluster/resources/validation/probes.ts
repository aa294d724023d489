// Container probes as kube 1.30's validateProbe and validateHandler check them: exactly one
// handler, non-negative timings; a liveness or startup probe needs successThreshold 1.
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { forbidden, invalid, invalidEach, notSupported, required } from './field.js';
import { portNameErrors, portNumberErrors } from './identifiers.js';

const handlerKinds = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;

/** ValidatePortNumOrName: a number in 1..65535 or an IANA service name. */
export function portNumOrNameCauses(port: JsonValue | undefined, path: string): StatusCause[] {
  if (typeof port === 'number') return invalidEach(path, port, portNumberErrors(port));
  if (typeof port === 'string') return invalidEach(path, port, portNameErrors(port));
  return invalidEach(path, 0, portNumberErrors(0));
}

function handlerCauses(handler: JsonObject, kind: string, path: string): StatusCause[] {
  switch (kind) {
    case 'exec': {
      const command = handler['command'];
      return Array.isArray(command) && command.length > 0 ? [] : [required(`${path}.command`)];
    }
    case 'httpGet': {
      const causes = portNumOrNameCauses(handler['port'], `${path}.port`);
      // path and scheme default to "/" and HTTP; only given values are checked.
      const scheme = handler['scheme'];
      if (typeof scheme === 'string' && scheme !== 'HTTP' && scheme !== 'HTTPS')
        causes.push(notSupported(`${path}.scheme`, scheme, ['HTTP', 'HTTPS']));
      return causes;
    }
    case 'tcpSocket':
      return portNumOrNameCauses(handler['port'], `${path}.port`);
    default: {
      const port = handler['port'];
      return typeof port === 'number'
        ? invalidEach(`${path}.port`, port, portNumberErrors(port))
        : [];
    }
  }
}

/** validateProbe (plus the liveness/startup successThreshold rule when `single` is set). */
export function validateProbe(
  probe: JsonValue | undefined,
  path: string,
  singleSuccess: boolean,
): StatusCause[] {
  if (!isJsonObject(probe)) return [];
  const causes: StatusCause[] = [];
  let handlers = 0;
  for (const kind of handlerKinds) {
    const handler = probe[kind];
    if (!isJsonObject(handler)) continue;
    if (handlers > 0) {
      causes.push(forbidden(`${path}.${kind}`, 'may not specify more than 1 handler type'));
    } else {
      handlers++;
      causes.push(...handlerCauses(handler, kind, `${path}.${kind}`));
    }
  }
  if (handlers === 0) causes.push(required(path, 'must specify a handler type'));
  for (const key of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ]) {
    const value = probe[key];
    if (typeof value === 'number' && value < 0)
      causes.push(invalid(`${path}.${key}`, value, 'must be greater than or equal to 0'));
  }
  const success = probe['successThreshold'];
  // Absent means the default, 1.
  if (singleSuccess && typeof success === 'number' && success !== 1)
    causes.push(invalid(`${path}.successThreshold`, success, 'must be 1'));
  return causes;
}
