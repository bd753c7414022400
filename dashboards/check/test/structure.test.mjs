// Structural checks pass on the committed dashboards and catch each kind of problem.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  checkAll,
  checkDashboard,
  groupByTags,
  loadDashboards,
  provisionedDatasources,
  variablesIn,
} from '../structure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dashboardsDir = join(here, '..', '..');
const datasources = provisionedDatasources(join(dashboardsDir, 'provisioning'));
const fresh = () => structuredClone(loadDashboards(dashboardsDir).find((d) => d.file === 'run.json').dashboard);
const dataPanels = (d) => d.panels.filter((p) => p.type !== 'row');
const only = (errors, re) => {
  assert.equal(errors.length, 1, `expected one error, got ${JSON.stringify(errors)}`);
  assert.match(errors[0], re);
};

test('the committed dashboards pass every structural check', () => {
  const results = checkAll(loadDashboards(dashboardsDir), datasources);
  assert.deepEqual(results.map((r) => r.file), ['comparison.json', 'probe-health.json', 'run.json']);
  for (const { file, errors } of results) assert.deepEqual(errors, [], file);
});

test('the provisioning file declares the InfluxDB datasource the dashboards use', () => {
  assert.equal(datasources.get('throttlescope-influxdb'), 'influxdb');
});

test('a duplicate panel id is reported', () => {
  const d = fresh();
  const [a, b] = dataPanels(d);
  b.id = a.id;
  only(checkDashboard(d, datasources), new RegExp(`panel id ${a.id} used by`));
});

test('overlapping panels are reported', () => {
  const d = fresh();
  const [a, b] = dataPanels(d);
  b.gridPos = { ...a.gridPos, x: a.gridPos.x + 1 };
  only(checkDashboard(d, datasources), new RegExp(`panels ${a.id} .* and ${b.id} .* overlap`));
});

test('a panel wider than the grid is reported', () => {
  const d = fresh();
  const p = dataPanels(d).at(-1);
  p.gridPos.x = 20;
  p.gridPos.w = 8;
  const errors = checkDashboard(d, datasources);
  assert.ok(errors.some((e) => /outside the 24-column grid/.test(e)), JSON.stringify(errors));
});

test('a datasource uid that is not provisioned is reported', () => {
  const d = fresh();
  dataPanels(d)[0].targets[0].datasource = { type: 'influxdb', uid: 'influx-typo' };
  only(checkDashboard(d, datasources), /"influx-typo" is not a provisioned datasource/);
});

test('a datasource of the wrong type is reported', () => {
  const d = fresh();
  d.templating.list[0].datasource = { type: 'prometheus', uid: 'throttlescope-influxdb' };
  only(checkDashboard(d, datasources), /type "prometheus" differs from the provisioned influxdb/);
});

test('a datasource referenced by name is reported', () => {
  const d = fresh();
  d.annotations.list[1].datasource = 'throttlescope InfluxDB';
  only(checkDashboard(d, datasources), /reference datasources by \{ type, uid \}/);
});

test('an undefined variable in a query, a title or a variable query is reported', () => {
  const d = fresh();
  dataPanels(d)[0].targets[0].query += ' AND "probe" =~ /^$probe$/';
  dataPanels(d)[1].title = 'Data on ${rigg}';
  d.templating.list[2].query = 'SHOW TAG VALUES WITH KEY = "target" WHERE "run" = \'[[runn]]\'';
  const errors = checkDashboard(d, datasources);
  assert.equal(errors.length, 3, JSON.stringify(errors));
  assert.match(errors.join('\n'), /undefined variable \$probe/);
  assert.match(errors.join('\n'), /undefined variable \$rigg/);
  assert.match(errors.join('\n'), /undefined variable \$runn/);
});

test('a $tag_ alias without the GROUP BY it needs is reported', () => {
  const d = fresh();
  const p = dataPanels(d).find((p) => p.targets?.[0]?.alias === '$tag_target $tag_phase');
  p.targets[0].query = p.targets[0].query.replace(', "phase"', '');
  only(checkDashboard(d, datasources), /alias uses \$tag_phase but the query does not GROUP BY "phase"/);
});

test('a duplicate refId is reported', () => {
  const d = fresh();
  const p = dataPanels(d).find((p) => p.type === 'timeseries');
  p.targets.push({ ...p.targets[0] });
  only(checkDashboard(d, datasources), /refId A twice/);
});

test('two dashboards with one uid are reported', () => {
  const all = loadDashboards(dashboardsDir);
  all[1].dashboard.uid = all[0].dashboard.uid;
  const errors = checkAll(all, datasources).flatMap((r) => r.errors);
  assert.deepEqual(errors, [`uid ${all[0].dashboard.uid} is also used by ${all[0].file}`]);
});

test('variable and GROUP BY parsing', () => {
  assert.deepEqual(variablesIn('a $x ${y} ${z:regex} [[w]] [[v:csv]] $__interval'), ['x', 'y', 'z', 'w', 'v', '__interval']);
  assert.deepEqual([...groupByTags('SELECT 1 FROM m WHERE $timeFilter GROUP BY time($__interval), "run", target fill(null)')], ['run', 'target']);
  assert.deepEqual(
    [...groupByTags('SELECT mean(a) FROM (SELECT sum(b) AS a FROM m GROUP BY time(1s), "run") WHERE $timeFilter GROUP BY time(1m), "run"')],
    ['run'],
  );
});
