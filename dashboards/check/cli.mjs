// Shared command-line plumbing of the check scripts.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** True when the module at `url` is the script node was started with. */
export function isMain(url) {
  return Boolean(process.argv[1]) && resolve(process.argv[1]) === fileURLToPath(url);
}

/** Parses `--name value` options (all strings); exits with `usage` on an unknown one. */
export function options(names, usage) {
  try {
    const { values } = parseArgs({
      options: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
      allowPositionals: false,
    });
    return values;
  } catch (e) {
    console.error(`${e.message}\nusage: ${usage}`);
    process.exit(2);
  }
}
