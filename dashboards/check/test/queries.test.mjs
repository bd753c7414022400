// Every dashboard query against a real influxd holding a real `hostd run --probe sim` run.
//
// Needs: the influxd of scripts/build-influxd.sh (or $INFLUXD), hostd (or $THROTTLESCOPE_HOSTD;
// default hostd/target/debug/hostd, built by `just test-dashboards`) and the probe simulator
// ($THROTTLESCOPE_PROBE_SIM, exported by the justfile).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startInfluxd } from '../influxd.mjs';
import { InfluxQL, checkAllQueries } from '../queries.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..', '..');
const dashboardsDir = join(repo, 'dashboards');
const hostd = process.env.THROTTLESCOPE_HOSTD ?? join(repo, 'hostd', 'target', 'debug', 'hostd');

/** Runs hostd with the token in its environment; throws with its output on failure. */
function runHostd(args, server) {
  const r = spawnSync(hostd, args, {
    encoding: 'utf8',
    env: { ...process.env, INFLUX_TOKEN: server.token },
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`hostd ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Records one run into `server`; returns its run id (the only `run` tag value). */
async function recordRun(server, work) {
  runHostd(
    ['run', '--profile', 'quick', '--probe', 'sim', '--target', join(work, 'a'), '--target', join(work, 'b'),
      '--out', join(work, 'run'), '--influx-url', server.url],
    server,
  );
  const influx = new InfluxQL(server.url, server.token);
  const { series } = await influx.query('SHOW TAG VALUES FROM "run" WITH KEY = "run"');
  const runs = series.flatMap((s) => s.values.map((v) => v[1]));
  assert.equal(runs.length, 1, `expected one run in the fresh InfluxDB, got ${JSON.stringify(runs)}`);
  return runs[0];
}

describe('dashboard queries against a real InfluxDB and a real sim run', () => {
  let server;
  let work;
  let run;
  let skip = null;

  before(async () => {
    if (!existsSync(hostd)) skip = `no hostd at ${hostd} (build it, or set THROTTLESCOPE_HOSTD)`;
    else if (!spawnSync(hostd, ['run', '--help'], { encoding: 'utf8' }).stdout.includes('--influx-url')) {
      skip = 'hostd run has no --influx-url yet';
    }
    if (skip) return;
    server = await startInfluxd();
    work = mkdtempSync(join(tmpdir(), 'throttlescope-dashboards-'));
    run = await recordRun(server, work);
  });

  after(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('every variable, panel and annotation query returns data of the expected shape', async (t) => {
    if (skip) return t.skip(skip);
    const influx = new InfluxQL(server.url, server.token);
    const results = await checkAllQueries(dashboardsDir, influx, { run });
    const failures = results.flatMap(({ file, report }) =>
      report.filter((r) => r.problems.length).map((r) => `${file} ${r.where}: ${r.problems.join('; ')}\n    ${r.query}`),
    );
    const total = results.reduce((n, r) => n + r.report.length, 0);
    t.diagnostic(`${total - failures.length} of ${total} queries returned the expected shape for run ${run}`);
    assert.deepEqual(failures, []);
  });

  test('the runner catches a broken query, a missing field and a missing annotation column', async (t) => {
    if (skip) return t.skip(skip);
    const influx = new InfluxQL(server.url, server.token);
    const d = JSON.parse(readFileSync(join(dashboardsDir, 'run.json'), 'utf8'));
    const panels = d.panels.filter((p) => p.targets);
    panels[0].targets[0].query = panels[0].targets[0].query.replace('SELECT', 'SELEKT');
    panels[1].targets[0].query = panels[1].targets[0].query.replace('"bytes"', '"no_such_field"');
    const xy = panels.find((p) => p.type === 'xychart');
    xy.options.series[0].x.matcher.options = 'gb_writen';
    d.annotations.list[1].target.textColumn = 'no_such_column';
    const dir = mkdtempSync(join(tmpdir(), 'throttlescope-broken-'));
    try {
      writeFileSync(join(dir, 'run.json'), JSON.stringify(d));
      const [{ report }] = await checkAllQueries(dir, influx, { run });
      const bad = report.filter((r) => r.problems.length).map((r) => `${r.where}: ${r.problems.join('; ')}`);
      assert.equal(bad.length, 4, bad.join('\n'));
      assert.match(bad[0], new RegExp(`panel ${panels[0].id} .*failed to parse query`));
      assert.match(bad[1], new RegExp(`panel ${panels[1].id} .*no rows`));
      assert.match(bad[2], /field "gb_writen" the panel refers to is not in the answer/);
      assert.match(bad[3], /annotation .*column no_such_column is missing/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
