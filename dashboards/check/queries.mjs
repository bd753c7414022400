#!/usr/bin/env node
// Run every query of the dashboards — variables, panel targets, annotations — against a real
// InfluxDB over its InfluxQL /query API (InfluxDB 2.x through the DBRP mapping), with the
// variables filled in as Grafana would, and check each answer has the shape its panel needs:
// no error, at least one row, every returned column non-empty (numeric for charts and
// stats), and every field the panel names (XY axes, overrides, annotation columns) present.
//
// Usage: INFLUX_TOKEN=… node queries.mjs --url http://127.0.0.1:PORT --run RUN_ID
//          [--rig RIG] [--from MS --to MS] [--db throttlescope] [--dashboards DIR]
//          [--allow-empty event,overlap]
// Without --from/--to the time range is the run's own, found from its data. --allow-empty
// names measurements a run may lack (a run without slowdowns has no events, a run with one
// target no overlap): their queries may come back empty without failing.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMain, options } from './cli.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** Panel types that plot numbers: every value column they get must hold numbers. */
const NUMERIC_PANELS = new Set(['timeseries', 'xychart', 'stat', 'barchart']);

/** A client of InfluxDB's InfluxQL endpoint. */
export class InfluxQL {
  /** `url` is the server's base URL, `token` an API token (sent as `Authorization: Token`). */
  constructor(url, token, db = 'throttlescope') {
    if (!token) throw new Error('no InfluxDB token: set INFLUX_TOKEN');
    this.url = url.replace(/\/+$/, '');
    this.token = token;
    this.db = db;
  }

  /** Runs one InfluxQL statement; returns its result ({ series: [...] }) or throws with the server's error. */
  async query(q) {
    const u = `${this.url}/query?${new URLSearchParams({ db: this.db, q, epoch: 'ms' })}`;
    const res = await fetch(u, { headers: { Authorization: `Token ${this.token}`, Accept: 'application/json' } });
    const body = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status} from /query: ${body.trim()}`);
    const json = JSON.parse(body);
    if (json.error) throw new Error(json.error);
    const r = json.results?.[0] ?? {};
    if (r.error) throw new Error(r.error);
    return { series: r.series ?? [] };
  }
}

/** Grafana's rounding of a raw interval (ms) to a readable one (rangeutil.roundInterval). */
export function roundInterval(ms) {
  return roundedInterval(ms).text;
}

/** The rounded interval as { text, ms }. */
export function roundedInterval(ms) {
  const steps = [
    [15, '10ms'], [35, '20ms'], [75, '50ms'], [150, '100ms'], [350, '200ms'], [750, '500ms'],
    [1500, '1s'], [3500, '2s'], [7500, '5s'], [12500, '10s'], [17500, '15s'], [25000, '20s'],
    [45000, '30s'], [90000, '1m'], [210000, '2m'], [450000, '5m'], [750000, '10m'],
    [1050000, '15m'], [1500000, '20m'], [2700000, '30m'], [5400000, '1h'], [9000000, '2h'],
    [16200000, '3h'], [24300000, '6h'], [64800000, '12h'],
  ];
  const toMs = (t) => Number.parseInt(t, 10) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[t.replace(/^\d+/, '')];
  for (const [limit, text] of steps) if (ms < limit) return { text, ms: toMs(text) };
  return { text: '1d', ms: 86_400_000 };
}

/** Grafana's regex escaping of a variable value (InfluxDB datasource, multi-value variables). */
export function escapeRegex(value) {
  return value.replace(/[\\^$*+?.()|[\]{}/]/g, '\\$&');
}

/** A variable's value as Grafana puts it into an InfluxQL query. */
export function formatValue(variable, values) {
  if (!variable.multi && !variable.includeAll) return values[0];
  const escaped = values.map(escapeRegex);
  return escaped.length === 1 ? escaped[0] : `(${escaped.join('|')})`;
}

/** Fills `$timeFilter`, `$__interval` and dashboard variables into `text`. */
export function interpolate(text, ctx) {
  return text.replace(/\$(\w+)|\$\{(\w+)\}|\[\[(\w+)\]\]/g, (whole, a, b, c) => {
    const name = a ?? b ?? c;
    if (name === 'timeFilter') return `time >= ${ctx.from}ms and time <= ${ctx.to}ms`;
    if (name === '__interval') return ctx.interval;
    if (name === '__interval_ms') return String(ctx.intervalMs);
    const v = ctx.variables.get(name);
    if (!v) throw new Error(`variable $${name} is not defined`);
    return formatValue(v.variable, v.values);
  });
}

/** Field names Grafana gives the answer of one target (time_series: alias or measurement.column; table: columns). */
export function fieldNames(target, series) {
  const names = new Set();
  for (const s of series) {
    const cols = s.columns.filter((c) => c !== 'time');
    if (target.resultFormat === 'table') {
      cols.forEach((c) => names.add(c));
      Object.keys(s.tags ?? {}).forEach((t) => names.add(t));
      continue;
    }
    for (const col of cols) {
      if (target.alias) {
        names.add(
          target.alias.replace(/\$(\w+)|\[\[(\w+)\]\]/g, (w, a, b) => {
            const n = a ?? b;
            if (n === 'col') return col;
            if (n === 'm' || n === 'measurement') return s.name;
            const tag = /^tag_(\w+)$/.exec(n)?.[1];
            return tag !== undefined ? (s.tags?.[tag] ?? '') : w;
          }),
        );
      } else {
        const tags = Object.entries(s.tags ?? {}).map(([k, v]) => `${k}: ${v}`);
        names.add(`${s.name}.${col}${tags.length ? ` {${tags.join(', ')}}` : ''}`);
      }
    }
  }
  return names;
}

/** Problems with the shape of one answer (empty list = fine). */
export function shapeProblems(series, { numeric = false, required = [] } = {}) {
  const problems = [];
  const rows = series.reduce((n, s) => n + (s.values?.length ?? 0), 0);
  if (rows === 0) return ['no rows'];
  const columns = new Map();
  for (const s of series) {
    s.columns.forEach((c, i) => {
      if (c === 'time') return;
      const seen = columns.get(c) ?? { nonNull: 0, numeric: 0 };
      for (const row of s.values ?? []) {
        if (row[i] !== null && row[i] !== undefined && row[i] !== '') seen.nonNull++;
        if (typeof row[i] === 'number' && Number.isFinite(row[i])) seen.numeric++;
      }
      columns.set(c, seen);
    });
  }
  for (const [c, seen] of columns) {
    if (seen.nonNull === 0) problems.push(`column ${c} is empty`);
    else if (numeric && seen.numeric === 0) problems.push(`column ${c} holds no numbers`);
  }
  for (const r of required) if (!columns.has(r)) problems.push(`column ${r} is missing (have ${[...columns.keys()].join(', ')})`);
  return problems;
}

/** Names a panel refers to: XY chart axes and override matchers ({ byName: [...], byRegexp: [...] }). */
export function panelReferences(panel) {
  const byName = [];
  const byRegexp = [];
  const add = (m) => {
    if (m?.id === 'byName' && typeof m.options === 'string') byName.push(m.options);
    if (m?.id === 'byRegexp' && typeof m.options === 'string') byRegexp.push(m.options);
  };
  for (const s of panel.options?.series ?? []) {
    add(s.x?.matcher);
    add(s.y?.matcher);
  }
  for (const o of panel.fieldConfig?.overrides ?? []) add(o.matcher);
  return { byName, byRegexp };
}

/** The values each GROUP BY tag took in an answer: { tag: [values] }. */
export function tagValues(series) {
  const out = {};
  for (const s of series) for (const [k, v] of Object.entries(s.tags ?? {})) (out[k] ??= new Set()).add(v);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

/** Measurements a raw InfluxQL query reads (`FROM "name"` / `FROM name`). */
export function measurementsOf(query) {
  return [...new Set([...(query ?? '').matchAll(/\bFROM\s+(?:"([^"]+)"|([A-Za-z_][\w]*))/gi)].map((m) => m[1] ?? m[2]))];
}

/** Runs `SHOW TAG VALUES`- and `SHOW TAG KEYS`-style variable queries in order: All where offered, else `choose[name]` or the first value. */
export async function resolveVariables(dashboard, influx, ctx, choose = {}) {
  const variables = new Map();
  const report = [];
  for (const variable of dashboard.templating?.list ?? []) {
    const where = `variable $${variable.name}`;
    const raw = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    let values = [];
    let q = raw;
    try {
      if (variable.type !== 'query') throw new Error(`variables of type ${variable.type} are not supported by this check`);
      q = interpolate(raw, { ...ctx, variables });
      const { series } = await influx.query(q);
      // SHOW TAG VALUES answers in column `value`, SHOW TAG KEYS in `tagKey`.
      const column = (s) => (s.columns.includes('value') ? s.columns.indexOf('value') : s.columns.indexOf('tagKey'));
      values = [...new Set(series.flatMap((s) => s.values.map((row) => String(row[column(s)]))))];
      if (values.length === 0) throw new Error('no values');
      // A chosen value must be offered; a single-value variable takes it, a multi-value
      // one with All keeps All (so the comparison dashboard sees every run).
      const wanted = choose[variable.name];
      if (wanted !== undefined && !values.includes(wanted)) {
        throw new Error(`${JSON.stringify(wanted)} is not among its values ${JSON.stringify(values)}`);
      }
      if (!variable.includeAll) values = [wanted ?? values[0]];
      report.push({ where, query: q, problems: [], rows: values.length, measurements: measurementsOf(raw) });
    } catch (e) {
      report.push({ where, query: q, problems: [e.message], rows: 0, measurements: measurementsOf(raw) });
    }
    variables.set(variable.name, { variable, values });
  }
  return { variables, report };
}

/** Runs every panel target and annotation query of a dashboard; returns one report entry per query. */
export async function checkDashboardQueries(dashboard, influx, range, choose = {}) {
  // Grafana: range / max data points (≈ panel width), rounded, no finer than the datasource's 10 ms.
  const { text, ms } = roundedInterval(Math.max(10, (range.to - range.from) / 1000));
  const ctx = { ...range, interval: text, intervalMs: ms };
  const { variables, report } = await resolveVariables(dashboard, influx, ctx, choose);
  const full = { ...ctx, variables };

  for (const panel of (dashboard.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])])) {
    if (!panel.targets?.length) continue;
    const names = new Set();
    let allAnswered = true;
    for (const target of panel.targets) {
      const where = `panel ${panel.id} "${panel.title}" ${target.refId}`;
      let q = target.query;
      try {
        q = interpolate(target.query, full);
        const { series } = await influx.query(q);
        const problems = shapeProblems(series, { numeric: NUMERIC_PANELS.has(panel.type) });
        fieldNames(target, series).forEach((n) => names.add(n));
        report.push({
          where,
          query: q,
          problems,
          rows: series.reduce((n, s) => n + s.values.length, 0),
          measurements: measurementsOf(target.query),
          tags: tagValues(series),
        });
      } catch (e) {
        allAnswered = false;
        report.push({ where, query: q, problems: [e.message], rows: 0, measurements: measurementsOf(target.query) });
      }
    }
    if (!allAnswered) continue;
    const { byName, byRegexp } = panelReferences(panel);
    const problems = [];
    for (const n of byName) if (!names.has(n)) problems.push(`field "${n}" the panel refers to is not in the answer (${[...names].join(', ')})`);
    for (const r of byRegexp) if (![...names].some((n) => new RegExp(r).test(n))) problems.push(`no field matches /${r}/ (${[...names].join(', ')})`);
    if (byName.length || byRegexp.length) {
      const measurements = [...new Set(panel.targets.flatMap((t) => measurementsOf(t.query)))];
      report.push({ where: `panel ${panel.id} "${panel.title}" fields`, query: '', problems, rows: names.size, measurements });
    }
  }

  for (const a of dashboard.annotations?.list ?? []) {
    if (a.builtIn) continue;
    const t = a.target ?? {};
    const where = `annotation "${a.name}"`;
    let q = t.query;
    try {
      q = interpolate(t.query, full);
      const { series } = await influx.query(q);
      const required = [t.textColumn, t.timeEndColumn, t.titleColumn, ...(t.tagsColumn ?? '').split(',')]
        .map((c) => (c ?? '').trim())
        .filter(Boolean);
      report.push({ where, query: q, problems: shapeProblems(series, { required }), rows: series.reduce((n, s) => n + s.values.length, 0), measurements: measurementsOf(t.query) });
    } catch (e) {
      report.push({ where, query: q, problems: [e.message], rows: 0, measurements: measurementsOf(t.query) });
    }
  }
  return report;
}

/** The time range (ms) of a run's data, padded by a minute on each side. */
export async function runRange(influx, run) {
  const times = [];
  for (const [m, f] of [['file', 'mbps'], ['probe_agg', 'power_w_mean'], ['interval', 'mbps']]) {
    for (const sel of ['first', 'last']) {
      const { series } = await influx.query(`SELECT ${sel}("${f}") FROM "${m}" WHERE "run" = '${run.replace(/'/g, "\\'")}'`);
      for (const s of series) for (const row of s.values) times.push(row[0]);
    }
  }
  if (times.length === 0) throw new Error(`run ${run} has no file, probe_agg or interval points`);
  return { from: Math.min(...times) - 60_000, to: Math.max(...times) + 60_000 };
}

/** Loads the dashboards of `dir` and checks all their queries; returns [{ file, report }]. */
export async function checkAllQueries(dir, influx, { run, rig, from, to }) {
  const range = from !== undefined && to !== undefined ? { from, to } : await runRange(influx, run);
  const choose = { run };
  if (rig !== undefined) choose.rig = rig;
  const out = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const dashboard = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    out.push({ file: f, report: await checkDashboardQueries(dashboard, influx, range, choose) });
  }
  return out;
}

if (isMain(import.meta.url)) {
  const usage =
    'INFLUX_TOKEN=… node queries.mjs --url URL --run RUN_ID [--rig RIG] [--from MS --to MS] [--db DB] [--dashboards DIR] [--allow-empty M1,M2]';
  const opt = options(['url', 'run', 'rig', 'from', 'to', 'db', 'dashboards', 'allow-empty'], usage);
  if (!opt.url || !opt.run) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  const influx = new InfluxQL(opt.url, process.env.INFLUX_TOKEN, opt.db ?? 'throttlescope');
  const from = opt.from !== undefined ? Number(opt.from) : undefined;
  const to = opt.to !== undefined ? Number(opt.to) : undefined;
  const dir = resolve(opt.dashboards ?? join(here, '..'));
  const results = await checkAllQueries(dir, influx, { run: opt.run, rig: opt.rig, from, to });
  const allowEmpty = new Set((opt['allow-empty'] ?? '').split(',').filter(Boolean));
  let passed = 0;
  let failed = 0;
  let empty = 0;
  for (const { file, report } of results) {
    for (const r of report) {
      const ok = r.problems.length === 0;
      if (!ok && r.rows === 0 && r.measurements.length && r.measurements.every((m) => allowEmpty.has(m))) {
        empty++;
        console.log(`empty ${file} ${r.where}: no ${r.measurements.join(', ')} data in this run (allowed)`);
        continue;
      }
      ok ? passed++ : failed++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${file} ${r.where}: ${ok ? `${r.rows} rows` : r.problems.join('; ')}`);
      if (!ok && r.query) console.log(`       ${r.query}`);
    }
  }
  console.log(`queries: ${passed} passed, ${failed} failed${empty ? `, ${empty} allowed empty` : ''}`);
  process.exit(failed ? 1 : 0);
}
