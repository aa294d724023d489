// Create-time validation of an apiextensions.k8s.io/v1 CustomResourceDefinition, as
// kube-apiserver runs it on the internal form of the object: per-version schemas, subresources
// and printer columns that are identical across versions are hoisted to spec.validation,
// spec.subresources and spec.additionalPrinterColumns, and errors carry those paths.
import type { JsonObject, JsonValue } from '../json.js';
import { isJsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import { childPath, indexPath, invalid, notSupported, required } from './cause.js';
import { jsonEqual } from './compiled.js';
import { validateConversion } from './crd-conversion.js';
import { objectAt, stringAt, stringsAt } from './crd-fields.js';
import { dns1035LabelErrors, dns1123SubdomainErrors } from './dns-names.js';
import { schemaIssues } from './schema-issues.js';

const printerColumnTypes = ['boolean', 'date', 'integer', 'number', 'string'];
const printerColumnFormats = [
  'byte',
  'date',
  'date-time',
  'double',
  'float',
  'int32',
  'int64',
  'password',
];

/** Root keywords allowed when the status subresource is on (kube's allowedFieldsAtRootSchema). */
const allowedAtRootWithStatus = [
  'description',
  'type',
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'required',
  'items',
  'properties',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
];
const allowedAtRootGoNames =
  '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]';

/** Semantic equality as kube compares per-version fields: empty lists equal missing ones. */
function sameField(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  const norm = (v: JsonValue | undefined): JsonValue | undefined =>
    Array.isArray(v) && v.length === 0 ? undefined : v;
  const x = norm(a);
  const y = norm(b);
  if (x === undefined || y === undefined) return x === y;
  return jsonEqual(x, y);
}

/**
 * kube prints whole Go structs as bad values here (every schema included); we print only what
 * the error is about, so a megabyte CRD does not end up in an error message.
 */
function versionSummary(versions: JsonObject[]): JsonValue {
  return versions.map((v) => ({
    name: v.name ?? null,
    served: v.served ?? null,
    storage: v.storage ?? null,
  }));
}

/** The root keywords that break the status-subresource rule, with their values. */
function disallowedRootKeywords(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema))
    if (!allowedAtRootWithStatus.includes(key)) out[key] = value;
  return out;
}

function validateSimpleJSONPath(value: string, path: string): FieldCause[] {
  if (value === '') return [invalid(path, value, 'must not be empty')];
  if (!value.startsWith('.'))
    return [invalid(path, value, 'must be a simple json path starting with .')];
  return [];
}

function validateNames(names: JsonObject, path: string, out: FieldCause[]): void {
  const plural = stringAt(names.plural);
  const singular = stringAt(names.singular);
  const kind = stringAt(names.kind);
  const listKind = stringAt(names.listKind);
  if (plural !== '') {
    const errs = dns1035LabelErrors(plural);
    if (errs.length > 0) out.push(invalid(childPath(path, 'plural'), plural, errs.join(',')));
  }
  if (singular !== '') {
    const errs = dns1035LabelErrors(singular);
    if (errs.length > 0) out.push(invalid(childPath(path, 'singular'), singular, errs.join(',')));
  }
  for (const [field, value] of [
    ['kind', kind],
    ['listKind', listKind],
  ] as const) {
    if (value === '') continue;
    const errs = dns1035LabelErrors(value.toLowerCase());
    if (errs.length > 0) {
      out.push(
        invalid(
          childPath(path, field),
          value,
          `may have mixed case, but should otherwise match: ${errs.join(',')}`,
        ),
      );
    }
  }
  stringsAt(names.shortNames).forEach((shortName, i) => {
    const errs = dns1035LabelErrors(shortName);
    if (errs.length > 0)
      out.push(invalid(indexPath(childPath(path, 'shortNames'), i), shortName, errs.join(',')));
  });
  if (kind !== '' && kind === listKind) {
    out.push(
      invalid(childPath(path, 'listKind'), listKind, 'kind and listKind may not be the same'),
    );
  }
  stringsAt(names.categories).forEach((category, i) => {
    const errs = dns1035LabelErrors(category);
    if (errs.length > 0)
      out.push(invalid(indexPath(childPath(path, 'categories'), i), category, errs.join(',')));
  });
}

function validatePrinterColumn(column: JsonObject, path: string, out: FieldCause[]): void {
  if (stringAt(column.name) === '') out.push(required(childPath(path, 'name'), ''));
  const type = stringAt(column.type);
  if (type === '')
    out.push(required(childPath(path, 'type'), `must be one of ${printerColumnTypes.join(',')}`));
  else if (!printerColumnTypes.includes(type))
    out.push(notSupported(childPath(path, 'type'), type, printerColumnTypes));
  const format = stringAt(column.format);
  if (format !== '' && !printerColumnFormats.includes(format)) {
    out.push(notSupported(childPath(path, 'format'), format, printerColumnFormats));
  }
  const jsonPath = stringAt(column.jsonPath);
  if (jsonPath === '') out.push(required(childPath(path, 'JSONPath'), ''));
  else out.push(...validateSimpleJSONPath(jsonPath, childPath(path, 'JSONPath')));
}

function validateScalePath(
  value: JsonValue | undefined,
  path: string,
  prefixes: readonly string[],
  under: string,
  requiredPath: boolean,
  out: FieldCause[],
): void {
  const text = stringAt(value);
  if (text === '') {
    if (requiredPath) out.push(required(path, ''));
    return;
  }
  const errs = validateSimpleJSONPath(text, path);
  if (errs.length > 0) out.push(...errs);
  else if (!prefixes.some((p) => text.startsWith(p)))
    out.push(invalid(path, text, `should be a json path under ${under}`));
}

function validateSubresources(
  subresources: JsonObject | undefined,
  path: string,
  out: FieldCause[],
): void {
  const scale = objectAt(subresources?.scale);
  if (scale === undefined) return;
  validateScalePath(
    scale.specReplicasPath,
    childPath(path, 'scale.specReplicasPath'),
    ['.spec.'],
    '.spec',
    true,
    out,
  );
  validateScalePath(
    scale.statusReplicasPath,
    childPath(path, 'scale.statusReplicasPath'),
    ['.status.'],
    '.status',
    true,
    out,
  );
  validateScalePath(
    scale.labelSelectorPath,
    childPath(path, 'scale.labelSelectorPath'),
    ['.spec.', '.status.'],
    'either .spec or .status',
    false,
    out,
  );
}

function validateRootWithStatus(schema: JsonObject, path: string, out: FieldCause[]): void {
  if (typeof schema.type === 'string' && schema.type !== 'object') {
    out.push(
      invalid(
        childPath(path, 'type'),
        schema.type,
        'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
      ),
    );
  }
  if (Object.keys(schema).some((k) => !allowedAtRootWithStatus.includes(k))) {
    out.push(
      invalid(
        path,
        disallowedRootKeywords(schema),
        `only ${allowedAtRootGoNames} fields are allowed at the root of the schema if the status subresource is enabled`,
      ),
    );
  }
}

function validateSchema(
  validation: JsonObject | undefined,
  statusEnabled: boolean,
  path: string,
  out: FieldCause[],
): void {
  const schemaPath = childPath(path, 'openAPIV3Schema');
  const schema = objectAt(validation?.openAPIV3Schema);
  if (schema === undefined) {
    out.push(required(schemaPath, 'schemas are required'));
    return;
  }
  if (statusEnabled) validateRootWithStatus(schema, schemaPath, out);
  out.push(...schemaIssues(schema, schemaPath));
}

function validateDeprecation(version: JsonObject, path: string, out: FieldCause[]): void {
  const warning = version.deprecationWarning;
  if (typeof warning !== 'string') return;
  const warningPath = childPath(path, 'deprecationWarning');
  if (version.deprecated !== true)
    out.push(invalid(warningPath, warning, 'can only be set for deprecated versions'));
  else if (warning.length > 256)
    out.push(invalid(warningPath, warning, 'must be <= 256 characters long'));
}

function validateMetadataName(crd: JsonObject, requiredName: string, out: FieldCause[]): void {
  const name = stringAt(objectAt(crd.metadata)?.name);
  if (name === '') {
    out.push(required('metadata.name', 'name or generateName is required'));
    return;
  }
  const messages = dns1123SubdomainErrors(name);
  if (name !== requiredName) messages.push('must be spec.names.plural+"."+spec.group');
  for (const msg of messages) out.push(invalid('metadata.name', name, msg));
}

/** See the contract in index.ts. */
export function crdIssues(crd: JsonObject): FieldCause[] {
  const out: FieldCause[] = [];
  const spec = objectAt(crd.spec) ?? {};
  const names = objectAt(spec.names) ?? {};
  const group = stringAt(spec.group);
  validateMetadataName(crd, `${stringAt(names.plural)}.${group}`, out);

  if (group === '') {
    out.push(required('spec.group', ''));
  } else {
    const errs = dns1123SubdomainErrors(group);
    if (errs.length > 0) out.push(invalid('spec.group', group, errs.join(',')));
    else if (!group.includes('.'))
      out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }

  const scope = stringAt(spec.scope);
  if (scope === '') out.push(required('spec.scope', ''));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    out.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));

  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const hoisted = (field: string): boolean =>
    versions.length > 0 && versions.every((v) => sameField(v[field], versions[0]?.[field]));
  const schemaHoisted = hoisted('schema');
  const subresourcesHoisted = hoisted('subresources');
  const columnsHoisted = hoisted('additionalPrinterColumns');

  // kube restricts the schema root when any version (or the hoisted spec) enables status.
  const statusEnabled = versions.some(
    (v) => objectAt(objectAt(v.subresources)?.status) !== undefined,
  );
  let storageCount = 0;
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((version, i) => {
    const versionPath = indexPath('spec.versions', i);
    const name = stringAt(version.name);
    if (version.storage === true) storageCount++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const errs = dns1035LabelErrors(name);
    if (errs.length > 0) out.push(invalid(childPath(versionPath, 'name'), name, errs.join(',')));
    validateDeprecation(version, versionPath, out);
    if (!schemaHoisted)
      validateSchema(
        objectAt(version.schema),
        statusEnabled,
        childPath(versionPath, 'schema'),
        out,
      );
    if (!subresourcesHoisted)
      validateSubresources(
        objectAt(version.subresources),
        childPath(versionPath, 'subresources'),
        out,
      );
    if (!columnsHoisted && Array.isArray(version.additionalPrinterColumns)) {
      version.additionalPrinterColumns.forEach((column, j) => {
        if (isJsonObject(column)) {
          validatePrinterColumn(
            column,
            indexPath(childPath(versionPath, 'additionalPrinterColumns'), j),
            out,
          );
        }
      });
    }
  });
  if (!unique)
    out.push(
      invalid('spec.versions', versionSummary(versions), 'must contain unique version names'),
    );
  if (versions.length === 0)
    out.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  else if (storageCount !== 1)
    out.push(
      invalid(
        'spec.versions',
        versionSummary(versions),
        'must have exactly one version marked as storage version',
      ),
    );

  // v1 defaults singular to the lower-cased kind and listKind to kind+"List" before validating.
  if (stringAt(names.plural) === '') out.push(required('spec.names.plural', ''));
  if (stringAt(names.kind) === '') out.push(required('spec.names.kind', ''));
  const defaultedNames: JsonObject = { ...names };
  const kind = stringAt(names.kind);
  if (stringAt(names.singular) === '' && kind !== '') defaultedNames.singular = kind.toLowerCase();
  if (stringAt(names.listKind) === '' && kind !== '') defaultedNames.listKind = `${kind}List`;
  if (stringAt(defaultedNames.singular) === '') out.push(required('spec.names.singular', ''));
  if (stringAt(defaultedNames.listKind) === '') out.push(required('spec.names.listKind', ''));
  validateNames(defaultedNames, 'spec.names', out);

  const first = versions[0];
  if (first !== undefined) {
    if (schemaHoisted)
      validateSchema(objectAt(first.schema), statusEnabled, 'spec.validation', out);
    if (subresourcesHoisted)
      validateSubresources(objectAt(first.subresources), 'spec.subresources', out);
    if (columnsHoisted && Array.isArray(first.additionalPrinterColumns)) {
      first.additionalPrinterColumns.forEach((column, j) => {
        if (isJsonObject(column))
          validatePrinterColumn(column, indexPath('spec.additionalPrinterColumns', j), out);
      });
    }
  }

  const preserveUnknownFields = spec.preserveUnknownFields === true;
  validateConversion(objectAt(spec.conversion), preserveUnknownFields, 'spec.conversion', out);
  if (preserveUnknownFields) {
    out.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  }
  return out;
}
