// Kubernetes timestamps: metav1.Time is RFC 3339 in whole seconds (`2024-05-01T10:00:00Z`),
// metav1.MicroTime has six fraction digits; olmq's own records keep milliseconds. Ages are
// printed as kubectl prints them.

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

/** A duration as kubectl prints ages (apimachinery's HumanDuration: 45s, 3m12s, 2h5m, 3d4h, 2y). */
export function humanDuration(seconds: number): string {
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${Math.floor(seconds)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10)
    return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${Math.floor(seconds % 60)}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}
