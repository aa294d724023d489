// crds/ must be CRDs a real kube-apiserver accepts: the devcluster's CRD validation (names,
// versions, structural schemas, printer columns) is kube's, so run it over every file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { formatCause, validateCustomResourceDefinition } from '../../shared/kube/schema/index.js';
import type { JsonObject } from '../../shared/kube/json.js';
import { repoRoot } from '../harness/repo.js';

const dir = join(repoRoot, 'crds');
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

t.test(
  'crds - every generated CRD is valid with a structural schema, as kube-apiserver checks it',
  (t) => {
    t.equal(files.length, 8, 'eight OLM kinds');
    for (const file of files) {
      const crd = parse(readFileSync(join(dir, file), 'utf8')) as JsonObject;
      const causes = validateCustomResourceDefinition(crd);
      t.same(causes.map(formatCause), [], `${file} is valid`);
    }
    t.end();
  },
);
