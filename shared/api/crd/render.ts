// Renders the generated CRDs as deterministic YAML files, one per kind, named like upstream's.
import { stringify } from 'yaml';
import { buildCrd, kindDefinitions, type GeneratedCrd } from './definitions.js';

/** A file of crds/: its name and full text. */
export interface CrdFile {
  fileName: string;
  text: string;
}

const HEADER = '# Generated from shared/api by `npm run gen:crds`. Do not edit.\n';

/** The YAML text of one CRD. */
export function renderCrd(crd: GeneratedCrd): string {
  return HEADER + stringify(crd, { lineWidth: 0, indentSeq: false, aliasDuplicateObjects: false });
}

/** Every CRD file, in a fixed order (e.g. `operators.coreos.com_clusterserviceversions.yaml`). */
export function renderCrdFiles(): CrdFile[] {
  return kindDefinitions.map((definition) => {
    const crd = buildCrd(definition);
    return { fileName: `${crd.spec.group}_${crd.spec.names.plural}.yaml`, text: renderCrd(crd) };
  });
}
