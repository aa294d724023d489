// The identifier checks and quantities of the devcluster's built-in validation, worded as
// apimachinery's util/validation and resource.Quantity.
import t from 'tap';
import {
  envVarNameErrors,
  percentErrors,
  portNameErrors,
  qualifiedNameErrors,
} from '../../devcluster/resources/validation/identifiers.js';
import { QuantityError, quantityValue } from '../../devcluster/resources/validation/quantity.js';

void t.test('identifiers - qualified names: prefix and name parts are checked apart', (t) => {
  t.same(qualifiedNameErrors('example.com/my-name'), []);
  t.same(qualifiedNameErrors('/x'), ['prefix part must be non-empty']);
  t.match(qualifiedNameErrors('Example.com/x')[0], /^prefix part a lowercase RFC 1123 subdomain/);
  t.same(qualifiedNameErrors('a/'), [
    'name part must be non-empty',
    `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
  ]);
  t.match(qualifiedNameErrors('a/b/c')[0], /^a qualified name must consist of/);
  t.same(qualifiedNameErrors('x'.repeat(64)), ['name part must be no more than 63 characters']);
  t.end();
});

void t.test('identifiers - port names are IANA service names', (t) => {
  t.same(portNameErrors('https'), []);
  t.same(portNameErrors('8080'), ['must contain at least one letter (a-z)']);
  t.same(portNameErrors('a--b'), ['must not contain consecutive hyphens']);
  t.same(portNameErrors('-web'), ['must not begin or end with a hyphen']);
  t.end();
});

void t.test('identifiers - env var names follow 1.30 rules (relaxed validation is off)', (t) => {
  t.same(envVarNameErrors('MY_VAR.name-1'), []);
  t.equal(envVarNameErrors('MY VAR').length, 1);
  t.same(envVarNameErrors('..x'), ["must not start with '..'"]);
  t.end();
});

void t.test('identifiers - percents', (t) => {
  t.same(percentErrors('25%'), []);
  t.match(
    percentErrors('25')[0],
    /^a valid percent string must be a numeric string followed by an ending '%'/,
  );
  t.end();
});

void t.test('quantities - binary, decimal and exponent suffixes; bad forms throw', (t) => {
  t.equal(quantityValue('500m'), 0.5);
  t.equal(quantityValue('1Gi'), 1024 ** 3);
  t.equal(quantityValue('1G'), 1e9);
  t.equal(quantityValue('1e3'), 1000);
  t.equal(quantityValue(2), 2);
  t.ok(quantityValue('128Mi') > quantityValue('100M'));
  t.throws(() => quantityValue('lots'), QuantityError);
  t.throws(() => quantityValue('1..2'), QuantityError);
  t.throws(() => quantityValue('1Zi'), QuantityError);
  t.end();
});
