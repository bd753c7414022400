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
import { startInfluxd, writeLines } from '../influxd.mjs';
import { InfluxQL, checkAllQueries, runRange } from '../queries.mjs';

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

/**
 * The runs the queries are checked against, all with the probe simulator inline and the
 * shared scenarios' simulated drives played 25x faster than real time. The main run: the X5
 * that throttles at 23.9 GB (a drop event) on a 15 W port (the budget on the power panel) and hub drive C writing at the same time (a
 * multi-target overlap). The second, for the comparison dashboard: a P50 whose SLC cache
 * runs out at 13 GB.
 */
const MAIN_TARGETS = ['sim:tb-ssd-15w-thermal*25', 'sim:hub-www-contention@C*25'];
const SECOND_TARGETS = ['sim:p50-slc-13gb*25'];

/**
 * The drive panels' points for run `run`: the simulated drives answer no smartctl, so the
 * main run gets what `hostd run` writes for real drives (`drive_temp`, `drive_log`), with
 * the values of the recorded answers in fixtures/smartctl: the Toshiba KXG6 NVMe before and
 * after a throttle (TMT1 9 → 12 transitions, 100 → 141 s; warning time 0 → 1 min; sensor 1
 * 35 °C) and the Samsung HD204UI behind a USB Sunplus bridge (SCT 27 °C, over-limit 0 → 2).
 * The OS log is read only while a run writes to a physical device, so the main run also gets
 * the `os_log` point a real USB reset gives (a kernel line of fixtures/os_log/frigate-superspeed-reset.dmesg).
 */
async function writeDriveRecords(server, influx, run, rig) {
  const { from, to } = await runRange(influx, run);
  const lines = [];
  for (let k = 0; k <= 10; k++) {
    const ns = BigInt(Math.round(from + ((to - from) * k) / 10)) * 1_000_000n;
    const late = k > 5;
    const tags = `rig=${rig},run=${run}`;
    lines.push(`drive_temp,${tags},target=nvme temperature_c=${35 + k} ${ns}`);
    lines.push(
      `drive_log,${tags},target=nvme warning_temp_time_min=${late ? 1 : 0}i,critical_comp_time_min=0i,tmt1_transitions=${late ? 12 : 9}i,tmt2_transitions=0i,tmt1_time_s=${late ? 141 : 100}i,tmt2_time_s=0i,sensors="1=35" ${ns}`,
    );
    lines.push(`drive_temp,${tags},target=usb-sata temperature_c=27 ${ns}`);
    lines.push(
      `drive_log,${tags},target=usb-sata sct_temperature_c=27,sct_over_limit_count=${late ? 2 : 0}i,sct_under_limit_count=0i ${ns}`,
    );
    if (k === 5) {
      lines.push(
        `os_log,${tags},kind=link_reset,target=usb-sata line="usb 4-1: reset SuperSpeed USB device number 3 using xhci_hcd",source="kernel",device="4-1" ${ns}`,
      );
    }
  }
  await writeLines(server, lines.join('\n'));
}

/** Records one run live into `server` with `hostd run --influx-url`, tagged `enclosure`; returns its run id. */
function recordRun(server, out, targets, enclosure) {
  const run = ['run', '--profile', 'sustained-100GB', '--probe', 'sim', '--seed', '2', '--quiet', '--out', out, '--tag', `enclosure=${enclosure}`];
  for (const t of targets) run.push('--target', t);
  runHostd([...run, '--influx-url', server.url], server);
  return JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).run_id;
}


describe('dashboard queries against a real InfluxDB and a real sim run', () => {
  let server;
  let work;
  let run;
  let second;
  let skip = null;

  before(async () => {
    if (!existsSync(hostd)) skip = `no hostd at ${hostd} (build it, or set THROTTLESCOPE_HOSTD)`;
    else if (!process.env.THROTTLESCOPE_PROBE_SIM) skip = 'THROTTLESCOPE_PROBE_SIM is not set (run through `just test-dashboards`)';
    if (skip && (process.env.CI || process.env.THROTTLESCOPE_REQUIRE_QUERIES === '1')) {
      throw new Error(`the query check cannot run: ${skip}`);
    }
    if (skip) return;
    server = await startInfluxd();
    work = mkdtempSync(join(tmpdir(), 'throttlescope-dashboards-'));
    run = recordRun(server, join(work, 'main'), MAIN_TARGETS, 'dock A');
    second = recordRun(server, join(work, 'second'), SECOND_TARGETS, 'dock B');
    const manifest = JSON.parse(readFileSync(join(work, 'main', 'manifest.json'), 'utf8'));
    await writeDriveRecords(server, new InfluxQL(server.url, server.token), run, manifest.host.hostname || 'unknown');
  });

  after(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('every variable, panel and annotation query returns data of the expected shape', async (t) => {
    if (skip) return t.skip(skip);
    const influx = new InfluxQL(server.url, server.token);
    // The time range covers both runs; single-run dashboards show the main run, the
    // comparison dashboard (run = All) both.
    const [a, b] = [await runRange(influx, run), await runRange(influx, second)];
    const range = { from: Math.min(a.from, b.from), to: Math.max(a.to, b.to) };
    const results = await checkAllQueries(dashboardsDir, influx, { run, ...range });
    const written = new Set((await influx.query('SHOW MEASUREMENTS')).series.flatMap((s) => s.values.map((v) => v[0])));
    const entries = results.flatMap(({ file, report }) => report.map((r) => ({ file, ...r })));
    const failures = entries
      .filter((r) => r.problems.length)
      .map((r) => {
        const unwritten = r.measurements.filter((m) => !written.has(m));
        const why = unwritten.length ? ` (hostd wrote no ${unwritten.join(', ')})` : '';
        return `${r.file} ${r.where}: ${r.problems.join('; ')}${why}\n    ${r.query}`;
      });
    const queries = entries.filter((r) => r.query).length;
    t.diagnostic(
      `${entries.length - failures.length} of ${entries.length} checks passed (${queries} queries, ${entries.length - queries} panels' field references) for runs ${run} and ${second}`,
    );
    assert.deepEqual(failures, []);
    assert.ok(queries >= 63, `only ${queries} queries were found in the dashboards`);

    // Side by side: every comparison query grouped by run shows both runs (the overlap
    // window exists only in the main run, which has two targets).
    const both = [run, second].sort();
    const grouped = entries.filter((r) => r.file === 'comparison.json' && r.tags?.run && !r.measurements.includes('overlap'));
    assert.ok(grouped.length >= 6, `only ${grouped.length} comparison queries group by run`);
    for (const r of grouped) assert.deepEqual(r.tags.run, both, `${r.where} does not show both runs`);
    // Grouped by a `hostd run --tag` (the first tag key, `enclosure`): one row per value.
    const byTag = entries.filter((r) => r.file === 'comparison.json' && r.tags?.enclosure);
    assert.equal(byTag.length, 1, 'no comparison query groups by the chosen tag');
    assert.deepEqual(byTag[0].tags.enclosure, ['dock A', 'dock B']);
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
