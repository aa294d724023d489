// Pod specs and pod templates as kube 1.30's ValidatePodSpec and ValidatePodTemplateSpec check
// them: volumes, containers and init containers, restartPolicy, dnsPolicy, serviceAccountName.
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { validateContainerCommon } from './containers.js';
import { duplicate, forbidden, invalid, invalidEach, notSupported, required } from './field.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './identifiers.js';
import { validateAnnotations, validateLabels } from './meta.js';
import { validateProbe } from './probes.js';

/** Volume source fields, in the order kube's validateVolumeSource counts them. */
const volumeSources = [
  'hostPath',
  'emptyDir',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'storageos',
  'configMap',
  'scaleIO',
  'projected',
  'csi',
  'ephemeral',
] as const;

/** The field each source must name (validate<Source>VolumeSource's Required checks). */
const sourceRequired: Partial<Record<(typeof volumeSources)[number], string>> = {
  hostPath: 'path',
  secret: 'secretName',
  configMap: 'name',
  persistentVolumeClaim: 'claimName',
};

const restartPolicies = ['Always', 'OnFailure', 'Never'];
const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

function textOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** ValidateVolumes: names unique DNS labels, exactly one source each. Returns the names too. */
function validateVolumes(
  volumes: JsonValue | undefined,
  path: string,
): { names: Set<string>; causes: StatusCause[] } {
  const names = new Set<string>();
  const causes: StatusCause[] = [];
  (Array.isArray(volumes) ? volumes : []).forEach((value, i) => {
    const volume = isJsonObject(value) ? value : {};
    const at = `${path}[${i}]`;
    let sources = 0;
    for (const source of volumeSources) {
      const given = volume[source];
      if (given === undefined || given === null) continue;
      if (sources > 0) {
        causes.push(forbidden(`${at}.${source}`, 'may not specify more than 1 volume type'));
        continue;
      }
      sources++;
      const field = sourceRequired[source];
      if (field !== undefined && isJsonObject(given) && textOf(given[field]) === '')
        causes.push(required(`${at}.${source}.${field}`));
    }
    if (sources === 0) causes.push(required(at, 'must specify a volume type'));
    const name = textOf(volume['name']);
    if (name === '') causes.push(required(`${at}.name`));
    else causes.push(...invalidEach(`${at}.name`, name, dns1123LabelErrors(name)));
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    else names.add(name);
  });
  return { names, causes };
}

function containersOf(value: JsonValue | undefined): JsonObject[] {
  return (Array.isArray(value) ? value : []).map((c) => (isJsonObject(c) ? c : {}));
}

/** validateContainers: at least one, names unique, the common checks and the probes. */
function validateContainers(spec: JsonObject, path: string, volumes: Set<string>): StatusCause[] {
  const containers = containersOf(spec['containers']);
  if (containers.length === 0) return [required(`${path}.containers`)];
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  containers.forEach((container, i) => {
    const at = `${path}.containers[${i}]`;
    causes.push(...validateContainerCommon(container, at, volumes));
    const name = textOf(container['name']);
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    else names.add(name);
    if (container['restartPolicy'] !== undefined)
      causes.push(forbidden(`${at}.restartPolicy`, 'may not be set for non-init containers'));
    causes.push(...validateProbe(container['livenessProbe'], `${at}.livenessProbe`, true));
    causes.push(...validateProbe(container['readinessProbe'], `${at}.readinessProbe`, false));
    causes.push(...validateProbe(container['startupProbe'], `${at}.startupProbe`, true));
  });
  return causes;
}

/** validateInitContainers: names unique among all containers; probes only on sidecars. */
function validateInitContainers(
  spec: JsonObject,
  path: string,
  volumes: Set<string>,
): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set(containersOf(spec['containers']).map((c) => textOf(c['name'])));
  containersOf(spec['initContainers']).forEach((container, i) => {
    const at = `${path}.initContainers[${i}]`;
    causes.push(...validateContainerCommon(container, at, volumes));
    const restartPolicy = container['restartPolicy'];
    if (restartPolicy !== undefined && restartPolicy !== 'Always')
      causes.push(notSupported(`${at}.restartPolicy`, textOf(restartPolicy), ['Always']));
    const name = textOf(container['name']);
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    else if (name !== '') names.add(name);
    if (restartPolicy === 'Always') {
      causes.push(...validateProbe(container['livenessProbe'], `${at}.livenessProbe`, true));
      causes.push(...validateProbe(container['readinessProbe'], `${at}.readinessProbe`, false));
      causes.push(...validateProbe(container['startupProbe'], `${at}.startupProbe`, true));
      return;
    }
    const sidecarOnly = 'may not be set for init containers without restartPolicy=Always';
    if (container['lifecycle'] !== undefined)
      causes.push(forbidden(`${at}.lifecycle`, sidecarOnly));
    if (container['livenessProbe'] !== undefined)
      causes.push(forbidden(`${at}.livenessProbe`, sidecarOnly));
    if (container['readinessProbe'] !== undefined)
      causes.push(forbidden(`${at}.readinessProbe`, 'may not be set for init containers'));
    if (container['startupProbe'] !== undefined)
      causes.push(forbidden(`${at}.startupProbe`, sidecarOnly));
  });
  return causes;
}

/** Required, or one of the allowed values. */
function enumCauses(
  value: JsonValue | undefined,
  path: string,
  allowed: readonly string[],
): StatusCause[] {
  const given = textOf(value);
  if (given === '') return [required(path)];
  return allowed.includes(given) ? [] : [notSupported(path, given, allowed)];
}

/** ValidatePodSpec, reduced to the fields real manifests get wrong. */
export function validatePodSpec(spec: JsonValue | undefined, path: string): StatusCause[] {
  if (!isJsonObject(spec)) return [required(`${path}.containers`)];
  const volumes = validateVolumes(spec['volumes'], `${path}.volumes`);
  const causes = [...volumes.causes];
  causes.push(...validateContainers(spec, path, volumes.names));
  causes.push(...validateInitContainers(spec, path, volumes.names));
  causes.push(...enumCauses(spec['restartPolicy'], `${path}.restartPolicy`, restartPolicies));
  causes.push(...enumCauses(spec['dnsPolicy'], `${path}.dnsPolicy`, dnsPolicies));
  causes.push(...validateLabels(spec['nodeSelector'], `${path}.nodeSelector`));
  const serviceAccount = textOf(spec['serviceAccountName']);
  if (serviceAccount !== '') {
    causes.push(
      ...invalidEach(
        `${path}.serviceAccountName`,
        serviceAccount,
        dns1123SubdomainErrors(serviceAccount),
      ),
    );
  }
  const deadline = spec['activeDeadlineSeconds'];
  if (typeof deadline === 'number' && (deadline < 1 || deadline > 2147483647)) {
    causes.push(
      invalid(
        `${path}.activeDeadlineSeconds`,
        deadline,
        'must be between 1 and 2147483647, inclusive',
      ),
    );
  }
  return causes;
}

/**
 * ValidatePodTemplateSpec: the template's labels and annotations, its pod spec, and the
 * restart policies the owning kind allows (Deployments and ReplicaSets: Always; Jobs:
 * OnFailure or Never), reported as kube's workload validations do.
 */
export function validatePodTemplate(
  template: JsonValue | undefined,
  path: string,
  restartPolicies: readonly string[],
): StatusCause[] {
  if (!isJsonObject(template)) return [required(path)];
  const metadata = isJsonObject(template['metadata']) ? template['metadata'] : {};
  const causes = [
    ...validateLabels(metadata['labels'], `${path}.metadata.labels`),
    ...validateAnnotations(metadata['annotations'], `${path}.metadata.annotations`),
    ...validatePodSpec(template['spec'], `${path}.spec`),
  ];
  const spec = isJsonObject(template['spec']) ? template['spec'] : {};
  const policy = textOf(spec['restartPolicy']);
  if (!restartPolicies.includes(policy))
    causes.push(notSupported(`${path}.spec.restartPolicy`, policy, restartPolicies));
  return causes;
}
