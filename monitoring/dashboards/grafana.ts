// A small builder of Grafana dashboard JSON (schemaVersion 39): rows of panels laid out left
// to right on Grafana's 24-column grid, a Prometheus datasource variable and query variables.
// Only what olmq's dashboards use.

/** One query of a panel. */
export interface Query {
  readonly expr: string;
  /** Legend template, e.g. "{{cluster}}". */
  readonly legend?: string;
  /** Instant query (tables, stats of the current value). */
  readonly instant?: boolean;
}

/** One panel. */
export interface PanelSpec {
  readonly title: string;
  readonly type: 'timeseries' | 'stat' | 'table' | 'bargauge';
  readonly queries: readonly Query[];
  readonly description?: string;
  /** Grafana unit id: short, s, ops, bytes, percentunit ... */
  readonly unit?: string;
  /** Width in grid columns (of 24); default 8. */
  readonly width?: number;
  /** Stacked series (timeseries). */
  readonly stacked?: boolean;
}

/** A row of panels. */
export interface RowSpec {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

/** A query variable (`label_values(...)`). */
export interface VariableSpec {
  readonly name: string;
  readonly label: string;
  readonly query: string;
}

/** A whole dashboard. */
export interface DashboardSpec {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly variables: readonly VariableSpec[];
  readonly rows: readonly RowSpec[];
}

const datasource = { type: 'prometheus', uid: '${datasource}' };
const panelHeight = 8;

function panelJson(panel: PanelSpec, id: number, x: number, y: number): Record<string, unknown> {
  const width = panel.width ?? 8;
  return {
    id,
    type: panel.type,
    title: panel.title,
    ...(panel.description === undefined ? {} : { description: panel.description }),
    datasource,
    gridPos: { h: panelHeight, w: width, x, y },
    fieldConfig: {
      defaults: {
        unit: panel.unit ?? 'short',
        ...(panel.type === 'timeseries'
          ? { custom: { stacking: { mode: panel.stacked === true ? 'normal' : 'none' } } }
          : {}),
      },
      overrides: [],
    },
    options:
      panel.type === 'table'
        ? { showHeader: true }
        : { legend: { displayMode: 'list', placement: 'bottom' } },
    ...(panel.type === 'table' ? { transformations: [{ id: 'merge', options: {} }] } : {}),
    targets: panel.queries.map((query, index) => ({
      refId: String.fromCharCode(65 + index),
      datasource,
      expr: query.expr,
      legendFormat: query.legend ?? '',
      ...(query.instant === true || panel.type === 'table'
        ? { instant: true, range: false, format: panel.type === 'table' ? 'table' : 'time_series' }
        : { range: true }),
    })),
  };
}

/** The dashboard as Grafana's JSON model. */
export function dashboardJson(spec: DashboardSpec): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of spec.rows) {
    panels.push({
      id: id++,
      type: 'row',
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y },
      panels: [],
    });
    y += 1;
    let x = 0;
    for (const panel of row.panels) {
      const width = panel.width ?? 8;
      if (x + width > 24) {
        x = 0;
        y += panelHeight;
      }
      panels.push(panelJson(panel, id++, x, y));
      x += width;
    }
    y += panelHeight;
  }
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: ['olmq'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    annotations: { list: [] },
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
        },
        ...spec.variables.map((variable) => ({
          name: variable.name,
          label: variable.label,
          type: 'query',
          datasource,
          query: { query: variable.query, refId: `${variable.name}-values` },
          definition: variable.query,
          refresh: 2,
          multi: true,
          includeAll: true,
          allValue: '.*',
          current: { selected: true, text: ['All'], value: ['$__all'] },
          sort: 1,
          hide: 0,
        })),
      ],
    },
    panels,
  };
}

/** Every panel's PromQL expressions (for checks; variables use Grafana's label_values). */
export function dashboardQueries(spec: DashboardSpec): string[] {
  return spec.rows.flatMap((row) =>
    row.panels.flatMap((panel) => panel.queries.map((q) => q.expr)),
  );
}

/** `label_values(<metric>, <label>)`: a variable listing one label's values of a metric. */
export function labelValues(metricName: string, label: string): string {
  return `label_values(${metricName}, ${label})`;
}
