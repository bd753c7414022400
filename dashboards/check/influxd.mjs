// A private influxd for the query checks: started on a free loopback port with its data in a
// temporary directory, onboarded (org and bucket "throttlescope"), with the DBRP mapping
// db "throttlescope" → bucket "throttlescope" that InfluxQL needs. Stop it with stop().
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The influxd binary: $INFLUXD, else what scripts/build-influxd.sh builds (cached) and prints. */
export function influxdBinary() {
  if (process.env.INFLUXD) {
    if (!existsSync(process.env.INFLUXD)) throw new Error(`INFLUXD=${process.env.INFLUXD} does not exist`);
    return process.env.INFLUXD;
  }
  const r = spawnSync(join(repo, 'scripts', 'build-influxd.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`scripts/build-influxd.sh failed (exit ${r.status})`);
  return r.stdout.trim().split('\n').at(-1);
}

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function api(url, token, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Token ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text.trim()}`);
  return text ? JSON.parse(text) : {};
}

/** Starts influxd; resolves to { url, token, orgId, bucketId, stop }. */
export async function startInfluxd(binary = influxdBinary()) {
  const dir = mkdtempSync(join(tmpdir(), 'throttlescope-influxd-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    binary,
    [
      'run',
      '--bolt-path', join(dir, 'influxd.bolt'),
      '--engine-path', join(dir, 'engine'),
      '--sqlite-path', join(dir, 'influxd.sqlite'),
      '--http-bind-address', `127.0.0.1:${port}`,
      '--reporting-disabled',
      '--ui-disabled',
      '--log-level', 'error',
    ],
    { env: { ...process.env, INFLUXD_CONFIG_PATH: dir }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  let exited = null;
  child.on('exit', (code) => (exited = code));
  const stop = async () => {
    if (exited === null) {
      child.kill('SIGTERM');
      await new Promise((ok) => (exited !== null ? ok() : child.once('exit', ok)));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited !== null) throw new Error(`influxd exited with ${exited}: ${stderr}`);
      try {
        if ((await fetch(`${url}/health`)).ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`influxd not healthy after 30 s: ${stderr}`);
      await new Promise((ok) => setTimeout(ok, 100));
    }
    const token = randomBytes(24).toString('hex');
    const setup = await api(url, null, 'POST', '/api/v2/setup', {
      username: 'throttlescope',
      password: randomBytes(12).toString('hex'),
      org: 'throttlescope',
      bucket: 'throttlescope',
      token,
    });
    const orgId = setup.org.id;
    const bucketId = setup.bucket.id;
    await api(url, token, 'POST', '/api/v2/dbrps', {
      orgID: orgId,
      bucketID: bucketId,
      database: 'throttlescope',
      retention_policy: 'autogen',
      default: true,
    });
    return { url, token, orgId, bucketId, stop, pid: child.pid };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Writes line protocol (ns precision) to the throttlescope bucket. */
export async function writeLines(server, lines) {
  const res = await fetch(`${server.url}/api/v2/write?org=throttlescope&bucket=throttlescope&precision=ns`, {
    method: 'POST',
    headers: { Authorization: `Token ${server.token}`, 'Content-Type': 'text/plain; charset=utf-8' },
    body: lines,
  });
  if (!res.ok) throw new Error(`write: HTTP ${res.status}: ${await res.text()}`);
}
