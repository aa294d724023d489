// Finds a bundle's ClusterServiceVersion among its encoded manifests and summarizes it,
// decoding as little as possible (see csv-scan.ts for why).
import { decodeBundleObject } from './bundle-content.js';
import { scanCsvJson, type CsvFields } from './csv-scan.js';
import { summarizeCsv, type CsvSummary } from './csv-summary.js';

// The kind of an object, when its first bytes settle it: a JSON object whose first or second
// member is "kind" (as Kubernetes writes them), or a YAML top-level `kind:` line.
const jsonKind = /^\s*\{\s*(?:"apiVersion"\s*:\s*"[^"\\]*"\s*,\s*)?"kind"\s*:\s*"([^"\\]*)"/;
const yamlKind = /^kind:[ \t]*["']?([A-Za-z0-9]+)["']?[ \t]*$/m;

function kindFromPrefix(prefix: string): string | undefined {
  return jsonKind.exec(prefix)?.[1] ?? yamlKind.exec(prefix)?.[1];
}

// One reusable buffer for decoding CSVs: allocating ~60 MB of short-lived buffers per build of a
// big catalog would hand most of the build's time to the garbage collector.
const scratch = {
  buffer: Buffer.alloc(1 << 20),
  /** Decodes base64 `data` into the buffer and returns the number of bytes. */
  decode(data: string): number {
    const needed = Math.ceil((data.length * 3) / 4);
    if (needed > this.buffer.length) this.buffer = Buffer.alloc(needed * 2);
    return this.buffer.write(data, 'base64');
  },
};

// Finds the CSV among a bundle's objects and summarizes it. Only a short prefix of each object
// is decoded to learn its kind, and the CSV's JSON is scanned for the few fields the index needs:
// a big catalog's manifests are far too large to decode in full on every build.
/**
 * Summarizes the first ClusterServiceVersion among base64 manifests, or undefined if there is
 * none; `onUndecodable` hears of objects that are not base64 JSON/YAML (they are skipped).
 */
export function findCsvSummary(
  objects: readonly string[],
  onUndecodable: (position: number, detail: string) => void,
): CsvSummary | undefined {
  for (const [i, data] of objects.entries()) {
    const prefix = Buffer.from(data.slice(0, 512), 'base64').toString('latin1');
    const kind = kindFromPrefix(prefix);
    if (kind !== undefined && kind !== 'ClusterServiceVersion') continue;
    if (prefix.trimStart().startsWith('{')) {
      // JSON whose kind the prefix did not settle (keys in another order) is scanned too.
      // Decode first: decode() may replace the buffer with a bigger one, which must be the one
      // scanned (reading scratch.buffer first scanned the previous CSV's bytes).
      const length = scratch.decode(data);
      const fields = scanCsvJson(scratch.buffer, length);
      if (fields?.kind === 'ClusterServiceVersion') return summarizeScannedCsv(fields);
      if (fields !== undefined) continue;
    }
    let decoded: Readonly<Record<string, unknown>>;
    try {
      decoded = decodeBundleObject(data);
    } catch (error) {
      onUndecodable(i + 1, error instanceof Error ? error.message : String(error));
      continue;
    }
    if (decoded['kind'] === 'ClusterServiceVersion') return summarizeCsv(decoded);
  }
  return undefined;
}

function summarizeScannedCsv(fields: CsvFields): CsvSummary {
  const annotations = fields.skipRange === undefined ? {} : { 'olm.skipRange': fields.skipRange };
  return summarizeCsv({ metadata: { annotations }, spec: fields.spec });
}
