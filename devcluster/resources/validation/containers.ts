// One container of a pod spec, as kube 1.30's validateContainerCommon and its helpers check it:
// name, image, ports, env, envFrom, volume mounts and resources (probes: probes.ts).
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { duplicate, invalid, invalidEach, notFound, notSupported, required } from './field.js';
import {
  configMapKeyErrors,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  envVarNameErrors,
  portNameErrors,
  portNumberErrors,
} from './identifiers.js';
import { quantityValue } from './quantity.js';

/** Port protocols of containers and services, sorted as kube lists them. */
export const portProtocols = ['SCTP', 'TCP', 'UDP'] as const;

function list(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

function entry(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {};
}

function textOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** The checks common to containers and init containers (validateContainerCommon). */
export function validateContainerCommon(
  container: JsonObject,
  path: string,
  volumes: ReadonlySet<string>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = textOf(container['name']);
  if (name === '') causes.push(required(`${path}.name`));
  else causes.push(...invalidEach(`${path}.name`, name, dns1123LabelErrors(name)));
  if (textOf(container['image']) === '') causes.push(required(`${path}.image`));
  causes.push(...validateContainerPorts(container['ports'], `${path}.ports`));
  causes.push(...validateEnv(container['env'], `${path}.env`));
  causes.push(...validateEnvFrom(container['envFrom'], `${path}.envFrom`));
  causes.push(...validateVolumeMounts(container['volumeMounts'], `${path}.volumeMounts`, volumes));
  const pullPolicy = container['imagePullPolicy'];
  if (typeof pullPolicy === 'string' && !['Always', 'IfNotPresent', 'Never'].includes(pullPolicy)) {
    causes.push(
      notSupported(`${path}.imagePullPolicy`, pullPolicy, ['Always', 'IfNotPresent', 'Never']),
    );
  }
  causes.push(...validateResources(container['resources'], `${path}.resources`));
  return causes;
}

/** validateContainerPorts: names IANA service names unique in the container, ports and protocols. */
function validateContainerPorts(ports: JsonValue | undefined, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  list(ports).forEach((value, i) => {
    const port = entry(value);
    const at = `${path}[${i}]`;
    const name = textOf(port['name']);
    if (name !== '') {
      const errors = portNameErrors(name);
      if (errors.length > 0) causes.push(...invalidEach(`${at}.name`, name, errors));
      else if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
      else names.add(name);
    }
    const containerPort = port['containerPort'];
    if (containerPort === undefined || containerPort === 0) {
      causes.push(required(`${at}.containerPort`));
    } else if (typeof containerPort === 'number') {
      causes.push(
        ...invalidEach(`${at}.containerPort`, containerPort, portNumberErrors(containerPort)),
      );
    }
    const hostPort = port['hostPort'];
    if (typeof hostPort === 'number' && hostPort !== 0)
      causes.push(...invalidEach(`${at}.hostPort`, hostPort, portNumberErrors(hostPort)));
    causes.push(...protocolCauses(port['protocol'], `${at}.protocol`));
  });
  return causes;
}

/** Required, or one of TCP/UDP/SCTP. */
export function protocolCauses(protocol: JsonValue | undefined, path: string): StatusCause[] {
  const value = textOf(protocol);
  if (value === '') return [required(path)];
  if (!(portProtocols as readonly string[]).includes(value))
    return [notSupported(path, value, portProtocols)];
  return [];
}

/** Fields a downward API env var may select (validEnvDownwardAPIFieldPathExpressions, sorted). */
const envFieldPaths = [
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];

/** ValidateEnv: names, and valueFrom with exactly one source and no value beside it. */
function validateEnv(env: JsonValue | undefined, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  list(env).forEach((value, i) => {
    const variable = entry(value);
    const at = `${path}[${i}]`;
    const name = textOf(variable['name']);
    if (name === '') causes.push(required(`${at}.name`));
    causes.push(...invalidEach(`${at}.name`, name, envVarNameErrors(name)));
    causes.push(...validateValueFrom(variable, `${at}.valueFrom`));
  });
  return causes;
}

function validateValueFrom(variable: JsonObject, path: string): StatusCause[] {
  const from = variable['valueFrom'];
  if (!isJsonObject(from)) return [];
  const causes: StatusCause[] = [];
  let sources = 0;
  const fieldRef = from['fieldRef'];
  if (isJsonObject(fieldRef)) {
    sources++;
    const fieldPath = textOf(fieldRef['fieldPath']);
    // metadata.labels['key'] and metadata.annotations['key'] select one entry.
    const subscripted = /^metadata\.(labels|annotations)\['.+'\]$/.test(fieldPath);
    if (fieldPath === '') causes.push(required(`${path}.fieldRef.fieldPath`));
    else if (!subscripted && !envFieldPaths.includes(fieldPath))
      causes.push(notSupported(`${path}.fieldRef.fieldPath`, fieldPath, envFieldPaths));
  }
  if (isJsonObject(from['resourceFieldRef'])) sources++;
  for (const key of ['configMapKeyRef', 'secretKeyRef']) {
    const ref = from[key];
    if (!isJsonObject(ref)) continue;
    sources++;
    const name = textOf(ref['name']);
    causes.push(...invalidEach(`${path}.${key}.name`, name, dns1123SubdomainErrors(name)));
    const selected = textOf(ref['key']);
    if (selected === '') causes.push(required(`${path}.${key}.key`));
    else causes.push(...invalidEach(`${path}.${key}.key`, selected, configMapKeyErrors(selected)));
  }
  if (sources === 0) {
    causes.push(
      invalid(
        path,
        '',
        'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      ),
    );
  } else if (textOf(variable['value']) !== '') {
    causes.push(invalid(path, '', 'may not be specified when `value` is not empty'));
  } else if (sources > 1) {
    causes.push(invalid(path, '', 'may not have more than one field specified at a time'));
  }
  return causes;
}

/** ValidateEnvFrom: one of configMapRef/secretRef each, with a name; the prefix an env var name. */
function validateEnvFrom(envFrom: JsonValue | undefined, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  list(envFrom).forEach((value, i) => {
    const source = entry(value);
    const at = `${path}[${i}]`;
    const prefix = textOf(source['prefix']);
    if (prefix !== '')
      causes.push(...invalidEach(`${at}.prefix`, prefix, envVarNameErrors(prefix)));
    let sources = 0;
    for (const key of ['configMapRef', 'secretRef']) {
      const ref = source[key];
      if (!isJsonObject(ref)) continue;
      sources++;
      const name = textOf(ref['name']);
      if (name === '') causes.push(required(`${at}.${key}.name`));
      else causes.push(...invalidEach(`${at}.${key}.name`, name, dns1123SubdomainErrors(name)));
    }
    // kube reports these two on the list's path, not the entry's.
    if (sources === 0)
      causes.push(invalid(path, '', 'must specify one of: `configMapRef` or `secretRef`'));
    else if (sources > 1)
      causes.push(invalid(path, '', 'may not have more than one field specified at a time'));
  });
  return causes;
}

/** ValidateVolumeMounts: a declared volume, a mountPath unique in the container, a relative subPath. */
function validateVolumeMounts(
  mounts: JsonValue | undefined,
  path: string,
  volumes: ReadonlySet<string>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const mountPaths = new Set<string>();
  list(mounts).forEach((value, i) => {
    const mount = entry(value);
    const at = `${path}[${i}]`;
    const name = textOf(mount['name']);
    if (name === '') causes.push(required(`${at}.name`));
    if (!volumes.has(name)) causes.push(notFound(`${at}.name`, name));
    const mountPath = textOf(mount['mountPath']);
    if (mountPath === '') causes.push(required(`${at}.mountPath`));
    if (mountPaths.has(mountPath))
      causes.push(invalid(`${at}.mountPath`, mountPath, 'must be unique'));
    mountPaths.add(mountPath);
    const subPath = textOf(mount['subPath']);
    // kube names the list, not the entry, for subPath errors.
    if (subPath !== '') causes.push(...localPathCauses(subPath, `${path}.subPath`));
  });
  return causes;
}

/** validateLocalDescendingPath: relative, without '..' segments. */
export function localPathCauses(target: string, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (target.startsWith('/')) causes.push(invalid(path, target, 'must be a relative path'));
  if (target.split(/[\\/]/).includes('..'))
    causes.push(invalid(path, target, "must not contain '..'"));
  return causes;
}

/** A quantity as the object gave it (kube prints its canonical form, which given forms mostly are). */
function quantityText(quantity: JsonValue | undefined): string {
  return typeof quantity === 'string' || typeof quantity === 'number' ? String(quantity) : '';
}

const standardResources = new Set(['cpu', 'memory', 'ephemeral-storage']);

function isContainerResourceName(name: string): boolean {
  return standardResources.has(name) || name.startsWith('hugepages-') || name.includes('/');
}

/** ValidateResourceRequirements: known names, quantities ≥ 0, requests ≤ limits. */
function validateResources(resources: JsonValue | undefined, path: string): StatusCause[] {
  const requirements = entry(resources);
  const limits = entry(requirements['limits']);
  const requests = entry(requirements['requests']);
  const causes: StatusCause[] = [];
  const check = (kind: string, name: string, quantity: JsonValue | undefined): number => {
    const at = `${path}.${kind}[${name}]`;
    if (!isContainerResourceName(name))
      causes.push(invalid(at, name, 'must be a standard resource for containers'));
    const amount = quantityValue(quantity);
    if (amount < 0)
      causes.push(invalid(at, quantityText(quantity), 'must be greater than or equal to 0'));
    return amount;
  };
  for (const [name, quantity] of Object.entries(limits)) check('limits', name, quantity);
  for (const [name, quantity] of Object.entries(requests)) {
    const amount = check('requests', name, quantity);
    const limit = limits[name];
    if (limit !== undefined && amount > quantityValue(limit)) {
      causes.push(
        invalid(
          `${path}.requests`,
          quantityText(quantity),
          `must be less than or equal to ${name} limit of ${quantityText(limit)}`,
        ),
      );
    }
  }
  return causes;
}
