// Kubernetes timestamps: metav1.Time is RFC 3339 in whole seconds (`2024-05-01T10:00:00Z`),
// metav1.MicroTime has six fraction digits; olmq's own records keep milliseconds.

/** How finely a timestamp is written. */
export type TimePrecision = 'seconds' | 'millis' | 'micros';

/** `at` as a Kubernetes timestamp: metav1.Time by default. */
export function kubeTime(at: Date, precision: TimePrecision = 'seconds'): string {
  const iso = at.toISOString(); // always milliseconds, in UTC
  switch (precision) {
    case 'seconds':
      return iso.replace(/\.\d{3}Z$/, 'Z');
    case 'millis':
      return iso;
    case 'micros':
      return iso.replace(/\.(\d{3})Z$/, '.$1000Z');
  }
}
