// The type check passes on the real dashboards and fails, at the right JSON line, on
// deliberately broken copies: proof that it checks against @grafana/schema for real.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { check } from '../typecheck.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dashboardsDir = join(here, '..', '..');
const checkDir = join(here, '..');
const run = () => JSON.parse(readFileSync(join(dashboardsDir, 'run.json'), 'utf8'));
const panelOfType = (d, type) => d.panels.find((p) => p.type === type);

// Each case breaks a copy of run.json in one way and names the error tsc must report.
const CASES = {
  'unknown-top-level-field': [(d) => (d.titel = 'x'), /'"titel"' does not exist/],
  'misspelt-panel-option': [(d) => (panelOfType(d, 'stat').options.colourMode = 'none'), /'"colourMode"' does not exist/],
  'bad-enum-value': [(d) => (panelOfType(d, 'xychart').options.mapping = 'automatic'), /'"automatic"' is not assignable to type '"auto" \| "manual"'/],
  'missing-required-option': [(d) => delete panelOfType(d, 'timeseries').options.legend, /Property 'legend' is missing/],
  'wrong-value-type': [(d) => (d.panels[1].gridPos.w = '3'), /Type 'string' is not assignable to type 'number'/],
  'bad-field-custom': [(d) => (panelOfType(d, 'timeseries').fieldConfig.defaults.custom.drawStyle = 'dots'), /'"dots"' is not assignable/],
  'misspelt-target-field': [(d) => (d.panels[1].targets[0].rawQuerry = true), /'"rawQuerry"' does not exist/],
  'bad-variable-type': [(d) => (d.templating.list[0].type = 'querry'), /'"querry"' is not assignable to type 'VariableType'/],
  'unknown-panel-type': [(d) => (panelOfType(d, 'table').type = 'tabel'), /error TS/],
};

test('the committed dashboards type-check against @grafana/schema', () => {
  const work = mkdtempSync(join(checkDir, '.tmp-ok-'));
  try {
    const { ok, output, files } = check(dashboardsDir, work);
    assert.ok(ok, output);
    assert.ok(files.length >= 3, `expected the three dashboards, got ${files.join(', ')}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('a work directory holding other files is refused and left as it was', () => {
  const work = mkdtempSync(join(checkDir, '.tmp-foreign-'));
  try {
    writeFileSync(join(work, 'notes.txt'), 'mine');
    assert.throws(() => check(dashboardsDir, work), /holds notes\.txt, which typecheck did not write/);
    assert.equal(readFileSync(join(work, 'notes.txt'), 'utf8'), 'mine');
    assert.throws(() => check(dashboardsDir, checkDir), /must be a directory inside/);
    // a directory it generated before is reused
    rmSync(join(work, 'notes.txt'));
    assert.ok(check(dashboardsDir, work).ok);
    assert.ok(check(dashboardsDir, work).ok);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('every deliberately broken copy fails the type check at its own JSON line', () => {
  const broken = mkdtempSync(join(checkDir, '.tmp-broken-'));
  try {
    const inputs = join(broken, 'in');
    mkdirSync(inputs);
    for (const [name, [breakIt]] of Object.entries(CASES)) {
      const d = run();
      breakIt(d);
      writeFileSync(join(inputs, `${name}.json`), JSON.stringify(d, null, 2));
    }
    const { ok, output } = check(inputs, join(broken, 'gen'));
    assert.equal(ok, false, 'tsc accepted broken dashboards');
    for (const [name, [, expected]] of Object.entries(CASES)) {
      const lines = output.split('\n').filter((l) => l.includes(`${name}.json:`));
      assert.ok(lines.length > 0, `no error reported for ${name}:\n${output}`);
      assert.match(lines.join('\n'), expected, `${name}: unexpected error text`);
      assert.match(lines[0], new RegExp(`${name}\\.json:\\d+:\\d+: error TS`), `${name}: location not in JSON terms`);
    }
  } finally {
    rmSync(broken, { recursive: true, force: true });
  }
});
