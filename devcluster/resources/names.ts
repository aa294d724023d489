// Object name rules per kind, worded as kube-apiserver's validation messages.
import { randomInt } from 'node:crypto';
import type { StatusCause } from '../../shared/kube/status.js';

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Which rule a kind's names follow. */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

/** The name rule of a kind: namespaces use DNS labels, services DNS-1035 labels, RBAC path segments. */
export function nameRuleOf(group: string, kind: string): NameRule {
  if (group === '' && kind === 'Namespace') return 'label';
  if (group === '' && kind === 'Service') return 'dns1035';
  if (group === 'rbac.authorization.k8s.io') return 'path';
  return 'subdomain';
}

/** Causes for an invalid metadata.name (empty when valid). */
export function validateName(
  name: string,
  rule: NameRule,
  fieldPath = 'metadata.name',
): StatusCause[] {
  const bad = (message: string): StatusCause[] => [
    {
      type: 'FieldValueInvalid',
      field: fieldPath,
      message: `Invalid value: ${JSON.stringify(name)}: ${message}`,
    },
  ];
  switch (rule) {
    case 'subdomain':
      if (name.length > 253) return bad('must be no more than 253 characters');
      if (!dns1123Subdomain.test(name)) {
        return bad(
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        );
      }
      return [];
    case 'label':
      if (name.length > 63) return bad('must be no more than 63 characters');
      if (!dns1123Label.test(name)) {
        return bad(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        );
      }
      return [];
    case 'dns1035':
      if (name.length > 63) return bad('must be no more than 63 characters');
      if (!dns1035Label.test(name)) {
        return bad(
          "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        );
      }
      return [];
    case 'path':
      if (name === '.' || name === '..') return bad(`may not be '${name}'`);
      if (name.includes('/')) return bad("may not contain '/'");
      if (name.includes('%')) return bad("may not contain '%'");
      return [];
  }
}

const generateAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** A random 5-character suffix from kube's alphabet (no vowels, no confusable digits). */
export function randomSuffix(length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += generateAlphabet[randomInt(generateAlphabet.length)];
  return out;
}

/** The name kube derives from generateName (prefix trimmed so the result fits 63 characters). */
export function nameFromGenerateName(prefix: string): string {
  const trimmed = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  return trimmed + randomSuffix();
}
