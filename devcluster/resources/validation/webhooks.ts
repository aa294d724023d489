// Validating and mutating webhook configurations (admissionregistration.k8s.io/v1) as kube
// 1.30's admissionregistration validation checks them.
import { isJsonObject, type JsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import { duplicate, goStrings, invalid, invalidEach, notSupported, required } from './field.js';
import { dns1035LabelErrors, dns1123SubdomainErrors, portNumberErrors } from './identifiers.js';
import { validateLabelSelector } from './meta.js';

/** AdmissionReview versions the API server can send. */
const acceptedReviewVersions = ['v1', 'v1beta1'];
const operations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const scopes = ['*', 'Cluster', 'Namespaced'];
const noSideEffectClasses = ['None', 'NoneOnDryRun'];
const urlForm = '; desired format: https://host[/path]';

function textOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.map((v) => textOf(v)) : [];
}

/** IsFullyQualifiedName: a DNS subdomain of at least three segments. */
function fullyQualifiedNameCauses(name: string, path: string): StatusCause[] {
  if (name === '') return [required(path)];
  const errors = dns1123SubdomainErrors(name);
  if (errors.length > 0) return [invalid(path, name, errors.join(','))];
  if (name.split('.').length < 3)
    return [
      invalid(path, name, 'should be a domain with at least three segments separated by dots'),
    ];
  return [];
}

/** validateResources: each non-empty; wildcard combinations kube refuses. */
function resourcesCauses(resources: readonly string[], path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (resources.length === 0) causes.push(required(path));
  const wildcardSubresources = new Set<string>();
  const wildcardResources = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSubresource = false;
  resources.forEach((entry, i) => {
    if (entry === '') {
      causes.push(required(`${path}[${i}]`));
      return;
    }
    if (entry === '*/*') doubleWildcard = true;
    if (entry === '*') singleWildcard = true;
    const slash = entry.indexOf('/');
    if (slash < 0) {
      withoutSubresource = entry !== '*';
      return;
    }
    const resource = entry.slice(0, slash);
    const sub = entry.slice(slash + 1);
    if (wildcardSubresources.has(resource))
      causes.push(
        invalid(`${path}[${i}]`, entry, `if '${resource}/*' is present, must not specify ${entry}`),
      );
    if (wildcardResources.has(sub))
      causes.push(
        invalid(`${path}[${i}]`, entry, `if '*/${sub}' is present, must not specify ${entry}`),
      );
    if (sub === '*') wildcardSubresources.add(resource);
    if (resource === '*') wildcardResources.add(sub);
  });
  if (resources.length > 1 && doubleWildcard)
    causes.push(
      invalid(path, goStrings(resources), "if '*/*' is present, must not specify other resources"),
    );
  if (singleWildcard && withoutSubresource) {
    causes.push(
      invalid(
        path,
        goStrings(resources),
        "if '*' is present, must not specify other resources without subresources",
      ),
    );
  }
  return causes;
}

/** validateRuleWithOperations. */
function ruleCauses(rule: JsonObject, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const ops = strings(rule['operations']);
  if (ops.length === 0) causes.push(required(`${path}.operations`));
  if (ops.length > 1 && ops.includes('*'))
    causes.push(
      invalid(
        `${path}.operations`,
        goStrings(ops),
        "if '*' is present, must not specify other operations",
      ),
    );
  ops.forEach((op, i) => {
    if (!operations.includes(op))
      causes.push(notSupported(`${path}.operations[${i}]`, op, operations));
  });
  const groups = strings(rule['apiGroups']);
  if (groups.length === 0) causes.push(required(`${path}.apiGroups`));
  if (groups.length > 1 && groups.includes('*'))
    causes.push(
      invalid(
        `${path}.apiGroups`,
        goStrings(groups),
        "if '*' is present, must not specify other API groups",
      ),
    );
  const versions = strings(rule['apiVersions']);
  if (versions.length === 0) causes.push(required(`${path}.apiVersions`));
  if (versions.length > 1 && versions.includes('*'))
    causes.push(
      invalid(
        `${path}.apiVersions`,
        goStrings(versions),
        "if '*' is present, must not specify other API versions",
      ),
    );
  versions.forEach((version, i) => {
    if (version === '') causes.push(required(`${path}.apiVersions[${i}]`));
  });
  causes.push(...resourcesCauses(strings(rule['resources']), `${path}.resources`));
  const scope = rule['scope'];
  if (typeof scope === 'string' && !scopes.includes(scope))
    causes.push(notSupported(`${path}.scope`, scope, scopes));
  return causes;
}

/** ValidateWebhookURL (https only). */
function urlCauses(raw: string, path: string): StatusCause[] {
  // Go's url.Parse reads a string without a scheme as a bare path: no scheme, no host.
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(raw)) {
    return [
      invalid(path, '', `'https' is the only allowed URL scheme${urlForm}`),
      invalid(path, '', `host must be specified${urlForm}`),
    ];
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [required(path, `url must be a valid URL: ${why}${urlForm}`)];
  }
  const causes: StatusCause[] = [];
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'https')
    causes.push(invalid(path, scheme, `'https' is the only allowed URL scheme${urlForm}`));
  if (url.host === '') causes.push(invalid(path, url.host, `host must be specified${urlForm}`));
  if (url.username !== '' || url.password !== '') {
    const user = url.password === '' ? url.username : `${url.username}:${url.password}`;
    causes.push(invalid(path, user, 'user information is not permitted in the URL'));
  }
  if (url.hash !== '')
    causes.push(invalid(path, url.hash.slice(1), 'fragments are not permitted in the URL'));
  if (url.search !== '')
    causes.push(
      invalid(path, url.search.slice(1), 'query parameters are not permitted in the URL'),
    );
  return causes;
}

/** ValidateWebhookService: name, namespace, port, and a path of DNS-subdomain segments. */
function serviceCauses(service: JsonObject, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (textOf(service['name']) === '')
    causes.push(required(`${path}.name`, 'service name is required'));
  if (textOf(service['namespace']) === '')
    causes.push(required(`${path}.namespace`, 'service namespace is required'));
  // v1 defaults the port to 443.
  const port = typeof service['port'] === 'number' ? service['port'] : 443;
  const portErrors = portNumberErrors(port);
  if (portErrors.length > 0)
    causes.push(invalid(`${path}.port`, port, `port is not valid: ${portErrors.join(', ')}`));
  const urlPath = service['path'];
  if (typeof urlPath !== 'string' || urlPath === '' || urlPath === '/') return causes;
  const at = `${path}.path`;
  if (urlPath === '//') return [...causes, invalid(at, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) causes.push(invalid(at, urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') causes.push(invalid(at, urlPath, `segment[${i}] may not be empty`));
    else
      for (const failure of dns1123SubdomainErrors(step))
        causes.push(invalid(at, urlPath, `segment[${i}]: ${failure}`));
  });
  return causes;
}

/** validateAdmissionReviewVersions (a recognized version required). */
function reviewVersionsCauses(versions: readonly string[], path: string): StatusCause[] {
  if (versions.length === 0)
    return [required(path, `must specify one of ${acceptedReviewVersions.join(', ')}`)];
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  versions.forEach((version, i) => {
    if (seen.has(version)) {
      causes.push(invalid(`${path}[${i}]`, version, 'duplicate version'));
      return;
    }
    seen.add(version);
    causes.push(...invalidEach(`${path}[${i}]`, version, dns1035LabelErrors(version)));
  });
  if (!versions.some((v) => acceptedReviewVersions.includes(v))) {
    causes.push(
      invalid(
        path,
        goStrings(versions),
        `must include at least one of ${acceptedReviewVersions.join(', ')}`,
      ),
    );
  }
  return causes;
}

/** validateValidatingWebhook / validateMutatingWebhook. */
function webhookCauses(hook: JsonObject, path: string, mutating: boolean): StatusCause[] {
  const causes = fullyQualifiedNameCauses(textOf(hook['name']), `${path}.name`);
  const rules = hook['rules'];
  (Array.isArray(rules) ? rules : []).forEach((rule, i) => {
    causes.push(...ruleCauses(isJsonObject(rule) ? rule : {}, `${path}.rules[${i}]`));
  });
  const choice = (key: string, allowed: readonly string[]): void => {
    const value = hook[key];
    if (typeof value === 'string' && !allowed.includes(value))
      causes.push(notSupported(`${path}.${key}`, value, allowed));
  };
  choice('failurePolicy', ['Fail', 'Ignore']);
  choice('matchPolicy', ['Equivalent', 'Exact']);
  const sideEffects = hook['sideEffects'];
  if (typeof sideEffects !== 'string')
    causes.push(
      required(`${path}.sideEffects`, `must specify one of ${noSideEffectClasses.join(', ')}`),
    );
  else choice('sideEffects', noSideEffectClasses);
  const timeout = hook['timeoutSeconds'];
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1))
    causes.push(
      invalid(
        `${path}.timeoutSeconds`,
        timeout,
        'the timeout value must be between 1 and 30 seconds',
      ),
    );
  causes.push(...validateLabelSelector(hook['namespaceSelector'], `${path}.namespaceSelector`));
  causes.push(...validateLabelSelector(hook['objectSelector'], `${path}.objectSelector`));
  if (mutating) choice('reinvocationPolicy', ['IfNeeded', 'Never']);
  const client = isJsonObject(hook['clientConfig']) ? hook['clientConfig'] : {};
  const url = client['url'];
  const service = client['service'];
  const hasUrl = typeof url === 'string';
  if (hasUrl === isJsonObject(service))
    causes.push(required(`${path}.clientConfig`, 'exactly one of url or service is required'));
  else if (hasUrl) causes.push(...urlCauses(url, `${path}.clientConfig.url`));
  else if (isJsonObject(service))
    causes.push(...serviceCauses(service, `${path}.clientConfig.service`));
  return causes;
}

function configurationCauses(object: JsonObject, mutating: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  const hooks = object['webhooks'];
  (Array.isArray(hooks) ? hooks : []).forEach((value, i) => {
    const hook = isJsonObject(value) ? value : {};
    const at = `webhooks[${i}]`;
    causes.push(...webhookCauses(hook, at, mutating));
    causes.push(
      ...reviewVersionsCauses(
        strings(hook['admissionReviewVersions']),
        `${at}.admissionReviewVersions`,
      ),
    );
    const name = textOf(hook['name']);
    if (name === '') return;
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    else names.add(name);
  });
  return causes;
}

/** ValidateValidatingWebhookConfiguration. */
export function validateValidatingWebhookConfiguration(object: JsonObject): StatusCause[] {
  return configurationCauses(object, false);
}

/** ValidateMutatingWebhookConfiguration. */
export function validateMutatingWebhookConfiguration(object: JsonObject): StatusCause[] {
  return configurationCauses(object, true);
}
