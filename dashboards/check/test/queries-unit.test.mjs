// The query runner's own logic: Grafana-like interpolation, field naming and shape checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeRegex, fieldNames, formatValue, interpolate, panelReferences, roundInterval, shapeProblems, tagValues } from '../queries.mjs';

const ctx = (vars) => ({
  from: 1000,
  to: 2000,
  interval: '1s',
  intervalMs: 1000,
  variables: new Map(Object.entries(vars).map(([k, [variable, values]]) => [k, { variable, values }])),
});

test('variables are filled in as Grafana does for InfluxQL', () => {
  const c = ctx({ run: [{}, ['r-1']], target: [{ multi: true, includeAll: true }, ['/mnt/a', '/mnt/b.x']] });
  assert.equal(
    interpolate('SELECT "mbps" FROM "file" WHERE "run" =~ /^$run$/ AND "target" =~ /^${target}$/ AND $timeFilter GROUP BY time($__interval)', c),
    'SELECT "mbps" FROM "file" WHERE "run" =~ /^r-1$/ AND "target" =~ /^(\\/mnt\\/a|\\/mnt\\/b\\.x)$/ AND time >= 1000ms and time <= 2000ms GROUP BY time(1s)',
  );
  assert.equal(formatValue({ multi: true }, ['a+b']), 'a\\+b');
  assert.equal(escapeRegex('a/b(c)'), 'a\\/b\\(c\\)');
  assert.throws(() => interpolate('WHERE "x" = $nope', c), /\$nope is not defined/);
});

test('interval rounding follows Grafana', () => {
  assert.equal(roundInterval(8), '10ms');
  assert.equal(roundInterval(1200), '1s');
  assert.equal(roundInterval(3600), '5s');
  assert.equal(roundInterval(100_000_000), '1d');
});

test('field names: alias patterns, measurement.column, table columns', () => {
  const series = [{ name: 'file', tags: { target: '/a', phase: 'write' }, columns: ['time', 'mbps'], values: [[1, 2]] }];
  assert.deepEqual([...fieldNames({ resultFormat: 'time_series', alias: '$tag_target $tag_phase' }, series)], ['/a write']);
  assert.deepEqual([...fieldNames({ resultFormat: 'time_series', alias: '$col' }, series)], ['mbps']);
  assert.deepEqual([...fieldNames({ resultFormat: 'time_series' }, series)], ['file.mbps {target: /a, phase: write}']);
  assert.deepEqual([...fieldNames({ resultFormat: 'table' }, series)], ['mbps', 'target', 'phase']);
});

test('shape problems: no rows, empty or non-numeric columns, missing columns', () => {
  assert.deepEqual(shapeProblems([]), ['no rows']);
  assert.deepEqual(shapeProblems([{ columns: ['time', 'a'], values: [] }]), ['no rows']);
  const s = [{ columns: ['time', 'a', 'b', 'c'], values: [[1, 1.5, null, 'x'], [2, 2, null, 'y']] }];
  assert.deepEqual(shapeProblems(s), ['column b is empty']);
  assert.deepEqual(shapeProblems(s, { numeric: true }), ['column b is empty', 'column c holds no numbers']);
  assert.deepEqual(shapeProblems(s, { required: ['a', 'text'] }), ['column b is empty', 'column text is missing (have a, b, c)']);
  assert.deepEqual(shapeProblems([{ columns: ['time', 'a'], values: [[1, 0]] }], { numeric: true }), []);
});

test('tag values of an answer', () => {
  const series = [
    { tags: { run: 'b', target: 'x' } },
    { tags: { run: 'a', target: 'x' } },
    { name: 'no tags' },
  ];
  assert.deepEqual(tagValues(series), { run: ['a', 'b'], target: ['x'] });
});

test('panel references: XY axes and override matchers', () => {
  const panel = {
    options: { series: [{ x: { matcher: { id: 'byName', options: 'gb' } }, y: { matcher: { id: 'byName', options: 'mbps' } } }] },
    fieldConfig: { overrides: [{ matcher: { id: 'byRegexp', options: '^m' } }, { matcher: { id: 'byType', options: 'time' } }] },
  };
  assert.deepEqual(panelReferences(panel), { byName: ['gb', 'mbps'], byRegexp: ['^m'] });
});

test('measurements a query reads, subqueries and SHOW statements included', async () => {
  const { measurementsOf } = await import('../queries.mjs');
  assert.deepEqual(measurementsOf('SELECT mean("a") FROM (SELECT sum("mbps") AS "a" FROM "interval" GROUP BY time(1s)) WHERE $timeFilter'), ['interval']);
  assert.deepEqual(measurementsOf('SHOW TAG VALUES FROM "probe_agg" WITH KEY = "probe"'), ['probe_agg']);
  assert.deepEqual(measurementsOf('SELECT * FROM run WHERE "x" = 1'), ['run']);
});
