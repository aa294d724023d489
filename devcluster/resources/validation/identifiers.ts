// Identifier checks of apimachinery's util/validation (IsDNS1123Label, IsQualifiedName,
// IsValidPortName...): each returns the messages kube gives, none when the value is valid.

const qualifiedNameFormat = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameMessage =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueFormat = `(${qualifiedNameFormat})?`;
const dns1123LabelFormat = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFormat = `${dns1123LabelFormat}(\\.${dns1123LabelFormat})*`;
const dns1035LabelFormat = '[a-z]([-a-z0-9]*[a-z0-9])?';
const envVarNameFormat = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const percentFormat = '[0-9]+%';

function whole(format: string): RegExp {
  return new RegExp(`^${format}$`);
}

const qualifiedName = whole(qualifiedNameFormat);
const labelValue = whole(labelValueFormat);
const dns1123Label = whole(dns1123LabelFormat);
const dns1123Subdomain = whole(dns1123SubdomainFormat);
const dns1035Label = whole(dns1035LabelFormat);
const envVarName = whole(envVarNameFormat);
const percent = whole(percentFormat);

/** util/validation's RegexError: the message, examples and the regex. */
export function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}

/** util/validation's MaxLenError. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** IsDNS1123Label: at most 63 lower case alphanumerics or '-'. */
export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!dns1123Label.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        dns1123LabelFormat,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errors;
}

/** IsDNS1123Subdomain: at most 253 characters of dot-separated labels. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(maxLenError(253));
  if (!dns1123Subdomain.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        dns1123SubdomainFormat,
        'example.com',
      ),
    );
  }
  return errors;
}

/** IsDNS1035Label: a DNS-1123 label starting with a letter. */
export function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!dns1035Label.test(value)) {
    errors.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        dns1035LabelFormat,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errors;
}

/** IsQualifiedName: `[prefix/]name`, the prefix a DNS subdomain, the name at most 63 characters. */
export function qualifiedNameErrors(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(qualifiedNameMessage, qualifiedNameFormat, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push(`name part ${maxLenError(63)}`);
  if (!qualifiedName.test(name)) {
    errors.push(
      `name part ${regexError(qualifiedNameMessage, qualifiedNameFormat, 'MyName', 'my.name', '123-abc')}`,
    );
  }
  return errors;
}

/** IsValidLabelValue: empty, or at most 63 characters of a qualified name. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!labelValue.test(value)) {
    errors.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        labelValueFormat,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errors;
}

/** IsValidPortNum. */
export function portNumberErrors(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : ['must be between 1 and 65535, inclusive'];
}

/** IsValidPortName: an IANA_SVC_NAME (at most 15 characters, a letter, no double hyphen). */
export function portNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name.length > 15) errors.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name))
    errors.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errors.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errors.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-'))
    errors.push('must not begin or end with a hyphen');
  return errors;
}

/**
 * IsEnvVarName, the rule of 1.30 (RelaxedEnvironmentVariableValidation is alpha there, off by
 * default): letters, digits, '_', '-', '.', not starting with a digit, and no '.'/'..' prefix.
 */
export function envVarNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (!envVarName.test(name)) {
    errors.push(
      regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        envVarNameFormat,
        'my.env-name',
        'MY_ENV.NAME',
        'MyEnvName1',
      ),
    );
  }
  if (name === '.') errors.push("must not be '.'");
  else if (name === '..') errors.push("must not be '..'");
  else if (name.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}

/** IsValidPercent. */
export function percentErrors(value: string): string[] {
  return percent.test(value)
    ? []
    : [
        regexError(
          "a valid percent string must be a numeric string followed by an ending '%'",
          percentFormat,
          '1%',
          '93%',
        ),
      ];
}

/** path.IsValidPathSegmentName (RBAC names). */
export function pathSegmentErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errors: string[] = [];
  for (const illegal of ['/', '%']) {
    if (name.includes(illegal)) errors.push(`may not contain '${illegal}'`);
  }
  return errors;
}

const configMapKeyFormat = '[-._a-zA-Z0-9]+';
const configMapKey = whole(configMapKeyFormat);

/** IsConfigMapKey: the keys of ConfigMaps and Secrets (and the keys env vars select). */
export function configMapKeyErrors(key: string): string[] {
  const errors: string[] = [];
  if (key.length > 253) errors.push(maxLenError(253));
  if (!configMapKey.test(key)) {
    errors.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        configMapKeyFormat,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  if (key === '.') errors.push("must not be '.'");
  else if (key === '..') errors.push("must not be '..'");
  else if (key.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}
