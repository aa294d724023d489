// Reads the manifests of a GetBundle answer straight from its protobuf bytes. A big catalog's
// manifests are ~75 MB of JSON; decoding them into JavaScript strings only to encode them again
// as base64 for olm.bundle.object doubled the client's work and garbage. Fields are found by
// number (Bundle.csvJson = 4, Bundle.object = 5, see proto/registry.proto); the rest is skipped.

/** csvJson and object of an api.Bundle, as views of the message bytes. */
export interface BundleManifestBytes {
  /** Bundle.csvJson (field 4), or null when absent or empty (proto3: the same). */
  readonly csvJson: Buffer | null;
  /** Bundle.object (field 5), in order. */
  readonly object: readonly Buffer[];
}

/** The bytes of a message are not protobuf (truncated or corrupt). */
export class WireFormatError extends Error {
  override readonly name = 'WireFormatError';
}

function varint(bytes: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    const b = bytes[i] as number;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return [value, i + 1];
    scale *= 128;
  }
  throw new WireFormatError(`truncated varint at byte ${at}`);
}

/** Decodes fields 4 and 5 of an api.Bundle message; throws WireFormatError on bad bytes. */
export function decodeBundleManifestBytes(bytes: Buffer): BundleManifestBytes {
  let csvJson: Buffer | null = null;
  const object: Buffer[] = [];
  let i = 0;
  while (i < bytes.length) {
    const [tag, afterTag] = varint(bytes, i);
    i = afterTag;
    const field = Math.floor(tag / 8);
    switch (tag % 8) {
      case 0:
        i = varint(bytes, i)[1];
        break;
      case 1:
        i += 8;
        break;
      case 2: {
        const [length, start] = varint(bytes, i);
        const end = start + length;
        if (end > bytes.length) throw new WireFormatError(`field ${field} overruns the message`);
        if (field === 4) csvJson = length === 0 ? null : bytes.subarray(start, end);
        else if (field === 5) object.push(bytes.subarray(start, end));
        i = end;
        break;
      }
      case 5:
        i += 4;
        break;
      default:
        throw new WireFormatError(`unsupported wire type ${tag % 8} for field ${field}`);
    }
  }
  if (i !== bytes.length) throw new WireFormatError('message ends inside a field');
  return { csvJson, object };
}
