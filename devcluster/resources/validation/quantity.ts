// resource.Quantity as the API server decodes it: a number with a binary (Ki..Ei), decimal
// (n..E) or exponent suffix. A string that does not parse fails the request's decoding (400).

/** The decoding error of a malformed quantity, as kube-apiserver words it. */
export class QuantityError extends Error {
  constructor() {
    super(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    this.name = 'QuantityError';
  }
}

const quantityPattern = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;

const binarySuffixes: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const decimalSuffixes: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** The value of a quantity (a JSON number or string); throws QuantityError when malformed. */
export function quantityValue(quantity: unknown): number {
  if (typeof quantity === 'number') return quantity;
  if (typeof quantity !== 'string') throw new QuantityError();
  const match = quantityPattern.exec(quantity.trim());
  const digits = match?.[1];
  const suffix = match?.[2] ?? '';
  if (digits === undefined || !/^[+-]?(\d+\.?\d*|\.\d+)$/.test(digits)) throw new QuantityError();
  const base = Number(digits);
  const binary = binarySuffixes[suffix];
  if (binary !== undefined) return base * 1024 ** binary;
  const decimal = decimalSuffixes[suffix];
  if (decimal !== undefined) return base * 10 ** decimal;
  const exponent = /^[eE]([-+]?\d+)$/.exec(suffix);
  if (exponent?.[1] !== undefined) return base * 10 ** Number(exponent[1]);
  throw new QuantityError();
}
