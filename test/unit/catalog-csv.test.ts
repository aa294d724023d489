// The CSV field scan (used instead of decoding whole CSVs) must read exactly what a full
// decode reads; and JSON lines whose big base64 strings are lifted out must parse the same.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { scanCsvJson } from '../../shared/catalog/csv-scan.js';
import { summarizeCsv } from '../../shared/catalog/csv-summary.js';
import { parseCatalogText, readCatalogDirectory } from '../../shared/catalog/index.js';
import { smallCatalog } from '../harness/repo.js';

const small = smallCatalog;

function scanned(bytes: Buffer) {
  const fields = scanCsvJson(bytes);
  if (fields === undefined) return undefined;
  const annotations = fields.skipRange === undefined ? {} : { 'olm.skipRange': fields.skipRange };
  return summarizeCsv({ metadata: { annotations }, spec: fields.spec });
}

t.test(
  'catalog csv - the field scan reads what a full decode reads, for every CSV of small/',
  async (t) => {
    let csvs = 0;
    for (const object of await readCatalogDirectory(small)) {
      if (object.schema !== 'olm.bundle') continue;
      for (const p of object.value['properties'] as { type: string; value: { data?: string } }[]) {
        if (p.type !== 'olm.bundle.object' || p.value.data === undefined) continue;
        const bytes = Buffer.from(p.value.data, 'base64');
        const full = JSON.parse(bytes.toString('utf8')) as { kind?: string };
        if (full.kind !== 'ClusterServiceVersion') continue;
        csvs++;
        t.same(scanned(bytes), summarizeCsv(full), `${String(object.value['name'])}`);
      }
    }
    t.equal(csvs, 62);
  },
);

t.test('catalog csv - escapes, unicode and odd spacing do not confuse the scan', (t) => {
  const csv = {
    kind: 'ClusterServiceVersion',
    metadata: { annotations: { 'x"}': '{[', 'olm.skipRange': '>=1.0.0 <2.0.0' } },
    spec: {
      description: 'brackets } ] and quotes \\" and ünïcödé {',
      displayName: 'Ünï "quoted"',
      installModes: [{ type: 'AllNamespaces', supported: true }],
      customresourcedefinitions: {
        owned: [
          { name: 'things.x.io', version: 'v1', kind: 'Thing', specDescriptors: [{ a: '}' }] },
        ],
      },
      replaces: 'a.v1',
    },
  };
  const bytes = Buffer.from(JSON.stringify(csv, null, 3), 'utf8');
  t.same(scanned(bytes), summarizeCsv(csv));
  t.end();
});

t.test('catalog csv - truncated CSV JSON is refused so the caller decodes it fully', (t) => {
  const text = JSON.stringify({ kind: 'ClusterServiceVersion', spec: { replaces: 'a' } });
  t.equal(scanCsvJson(Buffer.from(text.slice(0, -2))), undefined);
  t.end();
});

t.test('catalog csv - lines with lifted base64 strings parse like JSON.parse', async (t) => {
  const text = await readFile(join(small, 'etcd', 'catalog.json'), 'utf8');
  const objects = parseCatalogText(text, 'etcd/catalog.json');
  const plain = text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
  t.same(
    objects.map((o) => o.value),
    plain,
  );
  const escaped = `{"schema":"olm.bundle","properties":[{"type":"x","value":{"data":"${'A'.repeat(300)}\\u0041${'B'.repeat(300)}"}}]}`;
  t.same(parseCatalogText(escaped, 'x.json')[0]?.value, JSON.parse(escaped));
});
