/**
 * The types every throttlescope dashboard JSON must satisfy.
 *
 * Built from Grafana's published `@grafana/schema` (dashboard, panel and each panel
 * plugin's `Options`/`FieldConfig`), with two adaptations a JSON file needs:
 *  - `Json<T>` turns Grafana's string enums into their value unions (a JSON file holds
 *    "palette-classic", never `FieldColorModeId.PaletteClassic`);
 *  - panel targets and annotation targets are typed as Grafana's InfluxDB (InfluxQL)
 *    query, which `@grafana/schema` does not publish; its fields follow Grafana's
 *    `InfluxQuery` (public/app/plugins/datasource/influxdb/types.ts).
 * Everything else is Grafana's type, so an unknown or misspelt field, a wrong value type
 * or a missing required option is a compile error under `tsc --noEmit --strict`.
 */
import type {
  AnnotationQuery,
  DataQuery,
  DataSourceRef,
  Dashboard,
  FieldConfigSource,
  Panel,
  RowPanel,
  VariableModel,
} from '@grafana/schema';
import type * as BarChart from '@grafana/schema/dist/esm/raw/composable/barchart/panelcfg/x/BarChartPanelCfg_types.gen';
import type * as Stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as Table from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type * as Text from '@grafana/schema/dist/esm/raw/composable/text/panelcfg/x/TextPanelCfg_types.gen';
import type * as TimeSeries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';
import type * as XYChart from '@grafana/schema/dist/esm/raw/composable/xychart/panelcfg/x/XYChartPanelCfg_types.gen';

/** A Grafana type as it appears in JSON: string enums become their string values. */
export type Json<T> = T extends string
  ? string extends T
    ? string
    : `${T}`
  : T extends number | boolean | null | undefined
    ? T
    : T extends ReadonlyArray<infer U>
      ? Array<Json<U>>
      : T extends object
        ? { [K in keyof T]: Json<T[K]> }
        : T;

/** The datasource every query uses: the InfluxDB one from our provisioning file. */
export type InfluxRef = Json<DataSourceRef & { type: 'influxdb'; uid: string }>;

/**
 * A raw InfluxQL query of Grafana's InfluxDB datasource (panel target). A mapped type,
 * not an interface, so it is assignable to Grafana's `Record<string, unknown>` targets.
 */
export type InfluxQLTarget = Json<
  Omit<DataQuery, 'datasource'> & {
    datasource?: InfluxRef;
    /** Raw InfluxQL; Grafana fills `$timeFilter`, `$__interval` and dashboard variables. */
    query: string;
    rawQuery: true;
    resultFormat: 'time_series' | 'table';
    /** Series alias, e.g. `$tag_target`. */
    alias?: string;
  }
>;

/** An InfluxQL annotation query with its column mappings. */
export type InfluxQLAnnotationTarget = Json<
  DataQuery & {
    query: string;
    rawQuery: true;
    fromAnnotations?: boolean;
    textEditor?: boolean;
    /** Column shown as the annotation text. */
    textColumn?: string;
    /** Comma-separated columns shown as tags. */
    tagsColumn?: string;
    titleColumn?: string;
    /** Column holding the end time (ms) of a region annotation. */
    timeEndColumn?: string;
  }
>;

/** Fields every panel shares; its datasource must be our InfluxDB (or none, for text). */
type PanelBase = Omit<Panel, 'type' | 'options' | 'fieldConfig' | 'targets' | 'datasource'> & {
  id: number;
  gridPos: NonNullable<Panel['gridPos']>;
  title: string;
};

/** A data panel of plugin `T` with its published options and field config. */
type DataPanel<T extends string, O, F> = PanelBase & {
  type: T;
  datasource: InfluxRef;
  targets: InfluxQLTarget[];
  options: Json<O>;
  fieldConfig: Json<FieldConfigSource<F>>;
};

/** Every panel type the throttlescope dashboards use. */
export type ThrottlescopePanel =
  | DataPanel<'timeseries', TimeSeries.Options, TimeSeries.FieldConfig>
  | DataPanel<'xychart', XYChart.Options, XYChart.FieldConfig>
  | DataPanel<'stat', Stat.Options, Record<string, never>>
  | DataPanel<'table', Table.Options, Table.FieldConfig>
  | DataPanel<'barchart', BarChart.Options, BarChart.FieldConfig>
  | (PanelBase & { type: 'text'; options: Json<Text.Options> });

/** A row; rows in our dashboards are expanded, so their panels stay at top level. */
export type ThrottlescopeRow = Json<Omit<RowPanel, 'panels'>> & { panels: [] };

/** A dashboard variable: an InfluxQL `SHOW TAG VALUES` query, a constant or a custom list. */
export type ThrottlescopeVariable = Json<Omit<VariableModel, 'datasource'>> & {
  datasource?: InfluxRef;
};

/** A dashboard annotation: Grafana's built-in one or an InfluxQL query. */
export type ThrottlescopeAnnotation = Json<Omit<AnnotationQuery<InfluxQLAnnotationTarget>, 'datasource'>> & {
  datasource: InfluxRef | { type: 'grafana'; uid: '-- Grafana --' } | { type: 'datasource'; uid: 'grafana' };
};

/** A whole throttlescope dashboard JSON file. */
export type ThrottlescopeDashboard = Json<
  Omit<Dashboard, 'panels' | 'annotations' | 'templating' | 'id' | 'uid' | 'title' | 'schemaVersion'>
> & {
  id: null;
  uid: string;
  title: string;
  schemaVersion: 42;
  panels: Array<ThrottlescopePanel | ThrottlescopeRow>;
  annotations: { list: ThrottlescopeAnnotation[] };
  templating: { list: ThrottlescopeVariable[] };
};
