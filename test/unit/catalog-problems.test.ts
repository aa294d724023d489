// Warning and error codes are public surface (status messages, logs, metric labels): this test
// pins the catalogue so a rename is a deliberate, reviewed change.
import t from 'tap';
import { CatalogErrorCode, CatalogWarningCode } from '../../shared/catalog/index.js';

t.test('catalog problems - warning codes are pinned', (t) => {
  t.same(Object.values(CatalogWarningCode).sort(), [
    'bundle-csv-missing',
    'bundle-duplicate',
    'bundle-image-missing',
    'bundle-not-in-channel',
    'bundle-object-invalid',
    'bundle-package-mismatch',
    'bundle-package-property-missing',
    'bundle-package-property-multiple',
    'bundle-version-duplicate',
    'bundle-version-invalid',
    'channel-duplicate',
    'channel-empty',
    'channel-entry-duplicate',
    'channel-entry-unknown-bundle',
    'channel-multiple-heads',
    'channel-no-head',
    'channel-replaces-cycle',
    'channel-stranded-entries',
    'default-channel-missing',
    'deprecation-duplicate',
    'deprecation-unknown-reference',
    'object-invalid',
    'package-duplicate',
    'package-unknown',
    'package-without-channels',
    'property-invalid',
    'replaces-not-in-channel',
    'schema-missing',
    'skip-range-invalid',
    'skip-range-mismatch',
    'skips-not-in-channel',
    'unknown-schema',
  ]);
  t.end();
});

t.test('catalog problems - error codes are pinned', (t) => {
  t.same(Object.values(CatalogErrorCode).sort(), [
    'catalog-malformed',
    'catalog-serialized-invalid',
    'catalog-unreadable',
  ]);
  t.end();
});
