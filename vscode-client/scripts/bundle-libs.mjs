// `npm run bundle-libs`: run bundle_libs.py with a Python that has pip
// ($PYTHON, else the repository's .venv, else python3). Arguments are passed on.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.dirname(client);

export function buildPython() {
  if (process.env.PYTHON) return process.env.PYTHON;
  const venv = path.join(repo, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');
  return fs.existsSync(venv) ? venv : process.platform === 'win32' ? 'python' : 'python3';
}

export function bundleLibs(args = []) {
  const res = spawnSync(buildPython(), [path.join(client, 'scripts', 'bundle_libs.py'), ...args], { stdio: 'inherit' });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`bundle_libs.py exited with ${res.status}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    bundleLibs(process.argv.slice(2));
  } catch (err) {
    console.error(String(err));
    process.exit(1);
  }
}
