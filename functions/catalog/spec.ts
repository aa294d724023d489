// What a CatalogSource's spec asks for, checked as upstream's catalog operator checks it
// (validateSourceType, RegistryPoll's interval parsing), with upstream's messages.
import type { CatalogSourceSpec } from '../../shared/api/catalogsource.js';

/**
 * The kinds of source olmq reads, derived from spec.sourceType and spec.image/address:
 * 'grpc-image' is an image served by a registry Pod, 'image' one read directly (the default;
 * chosen after sourceKindOf, see image-source.ts).
 */
export type SourceKind = 'configmap' | 'grpc-address' | 'grpc-image' | 'image';

/** A spec that cannot be served: upstream's SpecInvalidError with its message. */
export class CatalogSourceSpecError extends Error {
  /** Only a person editing the CatalogSource can fix it. */
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'CatalogSourceSpecError';
  }
}

/** The source kind of a spec, or the SpecInvalidError upstream reports for it. */
export function sourceKindOf(spec: CatalogSourceSpec): SourceKind | CatalogSourceSpecError {
  const type = spec.sourceType;
  switch (type) {
    case 'configmap':
    case 'internal':
      if ((spec.configMap ?? '') === '')
        return new CatalogSourceSpecError(
          `configmap name unset: must be set for sourcetype: ${type}`,
        );
      return 'configmap';
    case 'grpc':
      // An image wins over an address, as upstream's reconciler factory decides.
      if ((spec.image ?? '') !== '') return 'grpc-image';
      if ((spec.address ?? '') !== '') return 'grpc-address';
      return new CatalogSourceSpecError(
        `image and address unset: at least one must be set for sourcetype: ${type}`,
      );
    default:
      return new CatalogSourceSpecError(`unknown sourcetype: ${type}`);
  }
}

/** Upstream's default polling interval, used when the given one does not parse. */
export const defaultPollIntervalMs = 15 * 60_000;

/** spec.updateStrategy.registryPoll, as upstream's decoder reads it. */
export interface PollSetting {
  intervalMs: number;
  /** Upstream's message when the interval did not parse (then intervalMs is the default). */
  parsingError?: string;
}

/** The polling interval of a spec, or undefined when the source is not polled. */
export function pollSettingOf(spec: CatalogSourceSpec): PollSetting | undefined {
  const raw = spec.updateStrategy?.registryPoll?.interval;
  if (raw === undefined) return undefined;
  const parsed = parseGoDuration(raw);
  if (typeof parsed === 'number') return { intervalMs: parsed };
  return {
    intervalMs: defaultPollIntervalMs,
    parsingError: `error parsing spec.updateStrategy.registryPoll.interval. Using the default value of 15m0s instead. Error: ${parsed}`,
  };
}

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Parses a Go duration ("15m", "1h30m", "2.5s") into milliseconds, or returns Go's error text
 * (`time: invalid duration "x"`), which upstream puts into the status message.
 */
export function parseGoDuration(text: string): number | string {
  const quoted = JSON.stringify(text);
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return `time: invalid duration ${quoted}`;
  let total = 0;
  while (rest !== '') {
    const number = /^(\d*)(\.\d*)?/.exec(rest);
    const digits = number?.[0] ?? '';
    if (digits === '' || digits === '.') return `time: invalid duration ${quoted}`;
    rest = rest.slice(digits.length);
    const unit = /^[^\d.]*/.exec(rest)?.[0] ?? '';
    if (unit === '') return `time: missing unit in duration ${quoted}`;
    const scale = unitMs[unit];
    if (scale === undefined)
      return `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`;
    total += Number(digits) * scale;
    rest = rest.slice(unit.length);
  }
  return sign * total;
}
