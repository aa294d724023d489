// Kubernetes name formats (apimachinery util/validation) with their exact error texts.
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function regexError(what: string, format: string, examples: readonly string[]): string {
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${what} (e.g. ${shown}regex used for validation is '${format}')`;
}

/** Violations of a DNS-1035 label (what kube requires of plurals, kinds, version names). */
export function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!dns1035Label.test(value)) {
    errors.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        '[a-z]([-a-z0-9]*[a-z0-9])?',
        ['my-name', 'abc-123'],
      ),
    );
  }
  return errors;
}

/** Violations of a lowercase RFC 1123 subdomain (group names, object names). */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push('must be no more than 253 characters');
  if (!dns1123Subdomain.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*',
        ['example.com'],
      ),
    );
  }
  return errors;
}
