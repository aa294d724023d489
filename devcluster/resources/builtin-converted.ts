// Built-in versions served from another version's storage (conversions.ts): each is declared as
// its storage version's kind, with the same printer columns read through the conversion.
import { eventsV1Conversion, hpaV1Conversion } from './conversions.js';
import type { BuiltinSpec } from './columns.js';
import type { VersionConversion } from './types.js';

interface ConvertedVersion {
  group: string;
  version: string;
  conversion: VersionConversion;
}

const convertedVersions: readonly ConvertedVersion[] = [
  { group: 'autoscaling', version: 'v1', conversion: hpaV1Conversion },
  { group: 'events.k8s.io', version: 'v1', conversion: eventsV1Conversion },
];

/** The converted versions' specs, derived from their storage versions' specs among `specs`. */
export function convertedSpecs(specs: readonly BuiltinSpec[]): BuiltinSpec[] {
  return convertedVersions.map(({ group, version, conversion }) => {
    const { storage } = conversion;
    const base = specs.find(
      (s) =>
        s.group === storage.group &&
        s.resource === storage.resource &&
        s.version === storage.version,
    );
    if (base === undefined)
      throw new Error(
        `no built-in spec for ${storage.resource} ${storage.group}/${storage.version}`,
      );
    const spec: BuiltinSpec = {
      ...base,
      group,
      version,
      conversion,
    };
    if (base.columns !== undefined)
      spec.columns = base.columns.map((column) => {
        const cell = column.cell;
        return cell === undefined
          ? column
          : { ...column, cell: (o, now) => cell(conversion.toStorage(o), now) };
      });
    return spec;
  });
}
