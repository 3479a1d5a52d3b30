/**
 * The dashboards flowscope generates, as TypeScript types built on Grafana's published schema (@grafana/schema).
 *
 * Every generated dashboard is checked twice (build/<uid>.ts, written by generate.mjs): its JSON, as an object
 * literal, against the type below for its datasource (so no property outside the schema passes: TypeScript's
 * excess-property check), then as a value against @grafana/schema's `Dashboard` itself.
 *
 * Why narrower than `Dashboard`: @grafana/schema types a panel's targets as `Record<string, unknown>` (anything
 * passes) and an annotation's target as the bare `DataQuery` (any datasource field is refused). So the targets are
 * typed here with the fields of Grafana's InfluxDB and Prometheus query models (InfluxQuery, PromQuery in Grafana's
 * sources, not published on npm), and each panel's options and custom field config with the panel plugin's own
 * published types (timeseries, stat, table). An annotation's query sits in its `target`; the deprecated top-level
 * `query` / `textColumn` of InfluxDB annotations is refused. A Prometheus annotation keeps `titleFormat`,
 * `textFormat`, `tagKeys` on the annotation: Grafana's Prometheus annotation support reads them there.
 */
import type {
  AnnotationQuery,
  Dashboard,
  DataQuery,
  FieldConfig,
  GraphFieldConfig,
  MatcherConfig,
  Panel,
  TableFieldOptions,
  VariableModel,
} from '@grafana/schema';
import type { Options as StatOptions } from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type { Options as TableOptions } from '@grafana/schema/dist/esm/raw/composable/table/panelcfg/x/TablePanelCfg_types.gen';
import type { Options as TimeSeriesOptions } from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

export type DatasourceType = 'influxdb' | 'prometheus';

/** A datasource by type and uid (the dashboards give `${datasource}`, their datasource variable). */
export type Ref<T extends DatasourceType> = {
  type: T;
  uid: string;
};

/**
 * DataQuery's own fields as an anonymous object type: an interface would not be assignable to the
 * `Record<string, unknown>` that @grafana/schema's Panel gives its targets.
 */
type Query = Pick<DataQuery, keyof DataQuery>;

/**
 * A type as JSON can write it: a string enum of the schema (StackingMode, ...) becomes the union of its values,
 * since the JSON says "normal", not StackingMode.Normal; numeric enums take their numbers as they are.
 */
type Json<T> = T extends string ? `${T}`
  : T extends readonly (infer U)[] ? Json<U>[]
  : T extends object ? { [K in keyof T]: Json<T[K]> }
  : T;

/** A raw InfluxQL panel query (InfluxQuery's fields that flowscope sets). */
export type InfluxQlTarget = Query & {
  datasource: Ref<'influxdb'>;
  query: string;
  rawQuery: true;
  resultFormat: 'time_series' | 'table';
  alias?: string;
};

/** An InfluxQL annotation query in the annotation's target, as Grafana's InfluxDB annotation support reads it. */
export type InfluxQlAnnotationTarget = Query & {
  query: string;
  rawQuery: true;
  fromAnnotations: true;
  textColumn: string;
  tagsColumn?: string;
  titleColumn?: string;
};

/** A PromQL query (PromQuery's fields that flowscope sets). */
export type PromQlTarget = Query & {
  datasource: Ref<'prometheus'>;
  expr: string;
  legendFormat?: string;
  range: boolean;
  instant: boolean;
  format: 'time_series' | 'table' | 'heatmap';
  interval?: string;
  editorMode?: 'code' | 'builder';
};

/** A PromQL annotation query: the datasource is the annotation's; `interval` is the step. */
export type PromQlAnnotationTarget = Query & {
  expr: string;
  range?: boolean;
  instant?: boolean;
  interval?: string;
  editorMode?: 'code' | 'builder';
};

export type InfluxAnnotation = Omit<AnnotationQuery<InfluxQlAnnotationTarget>, 'datasource' | 'target'> & {
  datasource: Ref<'influxdb'>;
  target: InfluxQlAnnotationTarget;
};

export type PromAnnotation = Omit<AnnotationQuery<PromQlAnnotationTarget>, 'datasource' | 'target'> & {
  datasource: Ref<'prometheus'>;
  target: PromQlAnnotationTarget;
  titleFormat?: string;
  textFormat?: string;
  tagKeys?: string;
  useValueForTime?: boolean;
};

/** The `datasource` variable: any datasource of one plugin type, its default in `current`. */
export type DatasourceVariable<T extends DatasourceType> = Omit<VariableModel, 'type' | 'query' | 'datasource'> & {
  type: 'datasource';
  name: 'datasource';
  query: T;
};

/** A query variable on the dashboard's datasource. */
export type QueryVariable<T extends DatasourceType> = Omit<VariableModel, 'type' | 'query' | 'datasource'> & {
  type: 'query';
  datasource: Ref<T>;
  query: string;
};

type FieldConfigOf<Custom> = {
  defaults: Omit<FieldConfig, 'custom'> & { custom?: Json<Partial<Custom>> };
  overrides: Array<{ matcher: MatcherConfig; properties: Array<{ id: string; value?: unknown }> }>;
};

type PanelOf<K extends string, T extends DatasourceType, Q, Options, Custom> =
  Omit<Panel, 'type' | 'datasource' | 'targets' | 'options' | 'fieldConfig'> & {
    type: K;
    datasource: Ref<T>;
    targets: Q[];
    options?: Json<Partial<Options>>;
    fieldConfig?: FieldConfigOf<Custom>;
  };

export type FlowscopePanel<T extends DatasourceType, Q> =
  | PanelOf<'timeseries', T, Q, TimeSeriesOptions, GraphFieldConfig>
  | PanelOf<'stat', T, Q, StatOptions, Record<never, never>>
  | PanelOf<'table', T, Q, TableOptions, TableFieldOptions>;

type DashboardOf<T extends DatasourceType, Q, A> = Omit<Dashboard, 'templating' | 'annotations' | 'panels'> & {
  templating: { list: Array<DatasourceVariable<T> | QueryVariable<T>> };
  annotations: { list: A[] };
  panels: Array<FlowscopePanel<T, Q>>;
};

export type InfluxDashboard = DashboardOf<'influxdb', InfluxQlTarget, InfluxAnnotation>;
export type PrometheusDashboard = DashboardOf<'prometheus', PromQlTarget, PromAnnotation>;
