// Shows that the check can fail: each mutation below breaks one generated dashboard in one way Grafana would not
// load or would silently ignore; every mutated file must get a tsc error, and the unmutated ones none.
// Usage: node selftest.mjs <dashboards dir> <out dir>   (then tsc over <out dir>; see run.sh)
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, out] = process.argv.slice(2);
const load = (uid) => JSON.parse(readFileSync(join(dir, `${uid}.json`), 'utf8'));
const timeseries = (d) => d.panels.find((p) => p.type === 'timeseries');

const MUTATIONS = {
  // the deprecated annotation shape the issue found: query and columns on the annotation, no target
  'old-influx-annotation': () => {
    const d = load('flowscope-overview');
    const a = d.annotations.list[0];
    Object.assign(a, { query: a.target.query, textColumn: a.target.textColumn });
    delete a.target;
    return ['influxdb', d];
  },
  'prometheus-annotation-without-target': () => {
    const d = load('flowscope-prom-overview');
    const a = d.annotations.list[0];
    a.expr = a.target.expr;
    delete a.target;
    return ['prometheus', d];
  },
  'stacking-mode-not-in-the-enum': () => {
    const d = load('flowscope-wait-states');
    d.panels[0].fieldConfig.defaults.custom.stacking.mode = 'stacked';
    return ['influxdb', d];
  },
  'legend-display-mode-not-in-the-enum': () => {
    const d = load('flowscope-prom-links');
    timeseries(d).options = { legend: { displayMode: 'tabel', placement: 'bottom', showLegend: true, calcs: [] } };
    return ['prometheus', d];
  },
  'stat-reduce-options-without-calcs': () => {
    const d = load('flowscope-prom-overview');
    delete d.panels[0].options.reduceOptions.calcs;
    return ['prometheus', d];
  },
  'promql-target-with-a-misspelt-expr': () => {
    const d = load('flowscope-prom-communicator');
    const t = timeseries(d).targets[0];
    t.exp = t.expr;
    delete t.expr;
    return ['prometheus', d];
  },
  'influxql-target-on-a-prometheus-dashboard': () => {
    const d = load('flowscope-prom-overview');
    timeseries(d).targets[0] = load('flowscope-overview').panels[0].targets[0];
    return ['prometheus', d];
  },
  'unknown-dashboard-property': () => {
    const d = load('flowscope-links');
    d.colour = 'red';
    return ['influxdb', d];
  },
  'unknown-variable-type': () => {
    const d = load('flowscope-communicator');
    d.templating.list[1].type = 'querry';
    return ['influxdb', d];
  },
  'grid-position-as-a-string': () => {
    const d = load('flowscope-anomalies');
    d.panels[0].gridPos.w = '8';
    return ['influxdb', d];
  },
};

const TYPES = { influxdb: 'InfluxDashboard', prometheus: 'PrometheusDashboard' };
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const [name, mutate] of Object.entries(MUTATIONS)) {
  const [type, d] = mutate();
  writeFileSync(join(out, `${name}.ts`),
    `import type { Dashboard } from '@grafana/schema';\n` +
    `import type { ${TYPES[type]} } from '../flowscope.js';\n\n` +
    `const dashboard: ${TYPES[type]} = ${JSON.stringify(d, null, 2)};\n\n` +
    `export const grafana: Dashboard = dashboard;\n`);
}
console.log(Object.keys(MUTATIONS).join('\n'));
