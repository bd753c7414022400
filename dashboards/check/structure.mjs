#!/usr/bin/env node
// Structural checks of the dashboard JSON files that a type cannot express:
//  - panel ids unique within a dashboard (rows and panels nested in rows included),
//    dashboard uids unique across files;
//  - grid positions inside the 24-column grid and no two panels overlapping;
//  - every datasource reference names a datasource (uid and type) of the provisioning files;
//  - every $variable, ${variable} or [[variable]] used is defined (or a Grafana global),
//    and every $tag_X alias names a tag the query groups by;
//  - refIds unique within a panel.
//
// Usage: node structure.mjs [--dashboards DIR] [--provisioning DIR]
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { isMain, options } from './cli.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** Datasources Grafana itself provides (built-in annotations, dashboard datasource). */
const BUILTIN_DATASOURCES = new Set(['-- Grafana --', 'grafana', '-- Dashboard --', '-- Mixed --']);
/** Grafana's global variables usable in InfluxQL queries. */
const GLOBAL_VARIABLES = new Set(['timeFilter', 'interval', 'timezone']);
/** Names Grafana's InfluxDB datasource fills in series aliases. */
const ALIAS_NAMES = new Set(['col', 'm', 'measurement']);

/** Reads every `*.json` in `dir` as { file, dashboard }. */
export function loadDashboards(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      try {
        return { file: f, dashboard: JSON.parse(readFileSync(path, 'utf8')) };
      } catch (e) {
        throw new Error(`${path}: not valid JSON: ${e.message}`);
      }
    });
}

/** Map uid → type of every datasource in the provisioning directory's datasources/*.yaml. */
export function provisionedDatasources(provisioningDir) {
  const dir = join(provisioningDir, 'datasources');
  const out = new Map();
  for (const f of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
    const doc = parseYaml(readFileSync(join(dir, f), 'utf8'));
    for (const ds of doc?.datasources ?? []) {
      if (!ds.uid || !ds.type) throw new Error(`${join(dir, f)}: datasource ${ds.name ?? '?'} needs uid and type`);
      out.set(ds.uid, ds.type);
    }
  }
  if (out.size === 0) throw new Error(`${dir}: no provisioned datasources`);
  return out;
}

/** Every panel of a dashboard, rows and panels nested in collapsed rows included. */
export function allPanels(dashboard) {
  const out = [];
  for (const p of dashboard.panels ?? []) {
    out.push(p);
    for (const q of p.panels ?? []) out.push(q);
  }
  return out;
}

function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Each `{ at, ref }` with a `datasource` object anywhere in `value`. */
function datasourceRefs(value, at, out = []) {
  if (Array.isArray(value)) value.forEach((v, i) => datasourceRefs(v, `${at}[${i}]`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'datasource' && v !== null && v !== undefined) out.push({ at: `${at}.datasource`, ref: v });
      else datasourceRefs(v, `${at}.${k}`, out);
    }
  }
  return out;
}

/** Variable names used in a string: $name, ${name}, ${name:fmt}, [[name]]. */
export function variablesIn(text) {
  const names = [];
  const re = /\$(\w+)|\$\{(\w+)(?:[:.][^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]/g;
  for (const m of text.matchAll(re)) names.push(m[1] ?? m[2] ?? m[3]);
  return names;
}

/** Tags a raw InfluxQL query groups by (quoted or bare identifiers after GROUP BY, time(...) excluded). */
export function groupByTags(query) {
  const m = /\bGROUP\s+BY\s+(.*?)(?:\bfill\s*\(|\bORDER\b|\bLIMIT\b|\bSLIMIT\b|\bTZ\s*\(|\)\s*WHERE\b|$)/gis;
  const tags = new Set();
  for (const g of query.matchAll(m)) {
    for (const part of g[1].split(',')) {
      const t = part.trim();
      if (!t || /^time\s*\(/i.test(t)) continue;
      tags.add(t.replace(/^"(.*)"$/, '$1'));
    }
  }
  return tags;
}

/** Strings of a dashboard that may hold variables, with where they are. */
function templatedStrings(dashboard) {
  const out = [];
  const push = (at, s) => typeof s === 'string' && out.push({ at, text: s });
  for (const p of allPanels(dashboard)) {
    const at = `panel ${p.id} "${p.title ?? ''}"`;
    push(`${at} title`, p.title);
    push(`${at} repeat`, p.repeat ? `$${p.repeat}` : undefined);
    (p.targets ?? []).forEach((t) => push(`${at} target ${t.refId} query`, t.query));
  }
  for (const v of dashboard.templating?.list ?? []) {
    push(`variable ${v.name} query`, typeof v.query === 'string' ? v.query : v.query?.query);
  }
  for (const a of dashboard.annotations?.list ?? []) push(`annotation "${a.name}" query`, a.target?.query ?? a.query);
  return out;
}

/** All structural problems of one dashboard, as human-readable strings. */
export function checkDashboard(dashboard, datasources) {
  const errors = [];
  const panels = allPanels(dashboard);

  const ids = new Map();
  for (const p of panels) {
    if (!Number.isInteger(p.id)) errors.push(`panel "${p.title}" has no integer id`);
    else if (ids.has(p.id)) errors.push(`panel id ${p.id} used by "${ids.get(p.id)}" and "${p.title}"`);
    else ids.set(p.id, p.title);
  }

  const placed = [];
  for (const p of panels) {
    const g = p.gridPos;
    if (!g) {
      errors.push(`panel ${p.id} "${p.title}" has no gridPos`);
      continue;
    }
    if (!(g.w > 0 && g.h > 0 && g.x >= 0 && g.y >= 0 && g.x + g.w <= 24)) {
      errors.push(`panel ${p.id} "${p.title}" gridPos ${JSON.stringify(g)} is outside the 24-column grid`);
    }
    for (const q of placed) {
      if (overlaps(q.gridPos, g)) errors.push(`panels ${q.id} "${q.title}" and ${p.id} "${p.title}" overlap`);
    }
    placed.push(p);
  }

  for (const { at, ref } of datasourceRefs(dashboard, 'dashboard')) {
    if (typeof ref !== 'object') {
      errors.push(`${at} is ${JSON.stringify(ref)}: reference datasources by { type, uid }`);
      continue;
    }
    if (BUILTIN_DATASOURCES.has(ref.uid)) continue;
    if (!datasources.has(ref.uid)) {
      errors.push(`${at} uid ${JSON.stringify(ref.uid)} is not a provisioned datasource (${[...datasources.keys()].join(', ')})`);
    } else if (ref.type !== datasources.get(ref.uid)) {
      errors.push(`${at} type ${JSON.stringify(ref.type)} differs from the provisioned ${datasources.get(ref.uid)}`);
    }
  }

  const defined = new Set((dashboard.templating?.list ?? []).map((v) => v.name));
  for (const { at, text } of templatedStrings(dashboard)) {
    for (const name of variablesIn(text)) {
      if (defined.has(name) || GLOBAL_VARIABLES.has(name) || name.startsWith('__')) continue;
      errors.push(`${at} uses undefined variable $${name}`);
    }
  }

  for (const p of panels) {
    const refIds = new Set();
    for (const t of p.targets ?? []) {
      if (refIds.has(t.refId)) errors.push(`panel ${p.id} "${p.title}" has refId ${t.refId} twice`);
      refIds.add(t.refId);
      if (typeof t.alias !== 'string') continue;
      const grouped = groupByTags(t.query ?? '');
      for (const name of variablesIn(t.alias)) {
        if (ALIAS_NAMES.has(name)) continue;
        const tag = /^tag_(\w+)$/.exec(name)?.[1];
        if (tag === undefined) errors.push(`panel ${p.id} target ${t.refId} alias uses $${name}, not an alias pattern`);
        else if (!grouped.has(tag)) errors.push(`panel ${p.id} target ${t.refId} alias uses $tag_${tag} but the query does not GROUP BY "${tag}"`);
      }
    }
  }
  return errors;
}

/** Checks every dashboard and the uniqueness of their uids; returns [{ file, errors }]. */
export function checkAll(dashboards, datasources) {
  const uids = new Map();
  return dashboards.map(({ file, dashboard }) => {
    const errors = checkDashboard(dashboard, datasources);
    if (uids.has(dashboard.uid)) errors.push(`uid ${dashboard.uid} is also used by ${uids.get(dashboard.uid)}`);
    uids.set(dashboard.uid, file);
    return { file, errors };
  });
}

if (isMain(import.meta.url)) {
  const opt = options(['dashboards', 'provisioning'], 'node structure.mjs [--dashboards DIR] [--provisioning DIR]');
  const dashboardsDir = resolve(opt.dashboards ?? join(here, '..'));
  const provisioningDir = resolve(opt.provisioning ?? join(here, '..', 'provisioning'));
  const results = checkAll(loadDashboards(dashboardsDir), provisionedDatasources(provisioningDir));
  let failed = 0;
  for (const { file, errors } of results) {
    for (const e of errors) console.error(`${file}: ${e}`);
    failed += errors.length;
  }
  if (failed) {
    console.error(`structure: FAILED (${failed} problems)`);
    process.exit(1);
  }
  console.log(`structure: ${results.length} dashboards OK (ids, grid, datasources, variables)`);
}
