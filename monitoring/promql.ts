// Queries name metrics only through these helpers, so each name is checked against the
// catalogue when the project compiles; promtool checks the syntax of the result (tests).
import type { metricCatalogue, MetricName } from './catalogue.js';

type SeriesOf<T extends MetricName> = (typeof metricCatalogue)[T]['type'] extends
  'histogram' | 'summary'
  ? T
  : never;
type Distribution = { [K in MetricName]: SeriesOf<K> }[MetricName];

/** `name{selector}` (or the bare name). */
export function metric(name: MetricName, selector = ''): string {
  return selector === '' ? name : `${name}{${selector}}`;
}

/** A histogram's or summary's `_bucket`, `_sum` or `_count` series. */
export function series(
  name: Distribution,
  part: 'bucket' | 'sum' | 'count',
  selector = '',
): string {
  return `${name}_${part}${selector === '' ? '' : `{${selector}}`}`;
}

/** The `cluster` selector of a dashboard's cluster variable. */
export const clusterSelector = 'cluster=~"$cluster"';
