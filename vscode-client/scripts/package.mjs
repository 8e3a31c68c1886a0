// `npm run package [-- --target linux-x64] [-- --skip-libs]`: the platform-specific .vsix.
//  1. type-check (tsc), 2. esbuild bundle, 3. bundled Python libs for the target,
//  4. stage manifest + bundle + libs + launcher + README (docs/vscode.md) in vscode-client/dist/stage,
//  5. @vscode/vsce package --target <target> -> vscode-client/dist/gradwarden-<version>-<target>.vsix
// Staging keeps vsce away from the repository (the .venv, node_modules, caches) and makes the
// package contents explicit.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from './build.mjs';
import { bundleLibs } from './bundle-libs.mjs';

const client = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.dirname(client);
const bin = (name) => path.join(repo, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

function run(cmd, args, opts = {}) {
  console.log(`[package] $ ${path.basename(cmd)} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${path.basename(cmd)} exited with ${res.status}`);
}

function copy(rel, stage) {
  const from = path.join(repo, rel);
  if (!fs.existsSync(from)) throw new Error(`missing ${rel}`);
  fs.cpSync(from, path.join(stage, rel), {
    recursive: true,
    filter: (src) => !/(^|[\\/])(__pycache__|\.pytest_cache)([\\/]|$)/.test(src) && !src.endsWith('.pyc'),
  });
}

async function scanFirstParty(stage) {
  const all = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else all.push(p);
    }
  };
  walk(stage);
  const env = all.filter((p) => /(^|[\\/])\.env(\.|$)/.test(path.basename(p)) || path.basename(p) === '.env');
  if (env.length) throw new Error(`.env files must not be packaged: ${env.join(', ')}`);
  const libs = path.join(stage, 'vscode-client', 'bundled', 'libs') + path.sep;
  const ours = all.filter((p) => !p.startsWith(libs) || /[\\/]gradwarden[\\/]/.test(p.slice(libs.length)));
  const require = createRequire(import.meta.url);
  const { lintFiles, prettyPrintLintResult } = require(path.join(repo, 'node_modules', '@vscode', 'vsce', 'out', 'secretLint.js'));
  const res = await lintFiles(ours, true, true);
  if (!res.ok) throw new Error(`possible secrets in the package:\n${res.results.map(prettyPrintLintResult).join('\n')}`);
  console.log(`[package] secret scan: ${ours.length} first-party files clean`);
}

async function main() {
  const t0 = Date.now();
  const target = option('--target', process.env.GRADWARDEN_VSCODE_TARGET || 'linux-x64');
  const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
  const out = path.resolve(repo, option('--out', path.join('vscode-client', 'dist', `${manifest.name}-${manifest.version}-${target}.vsix`)));

  run(bin('tsc'), ['-p', path.join(client, 'tsconfig.json'), '--noEmit']);
  await build({ dev: false });
  const libs = path.join(client, 'bundled', 'libs');
  const bundleInfo = path.join(libs, 'BUNDLE.json');
  const haveLibs = fs.existsSync(bundleInfo) && JSON.parse(fs.readFileSync(bundleInfo, 'utf8')).target === target;
  if (process.argv.includes('--skip-libs') && haveLibs) console.log('[package] reusing vscode-client/bundled/libs');
  else bundleLibs(['--target', target]);

  const stage = path.join(client, 'dist', 'stage');
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  const staged = { ...manifest };
  delete staged.devDependencies; // bundled by esbuild: nothing for vsce to collect
  delete staged.dependencies;
  delete staged.scripts;
  delete staged.allowScripts;
  fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(staged, null, 2) + '\n');
  fs.copyFileSync(path.join(repo, 'docs', 'vscode.md'), path.join(stage, 'README.md'));
  for (const name of ['LICENSE', 'LICENSE.md', 'LICENSE.txt']) {
    if (fs.existsSync(path.join(repo, name))) fs.copyFileSync(path.join(repo, name), path.join(stage, name));
  }
  for (const rel of ['vscode-client/out/extension.js', 'vscode-client/tool', 'vscode-client/bundled/libs']) copy(rel, stage);
  const legal = path.join(client, 'out', 'extension.js.LEGAL.txt');
  if (fs.existsSync(legal)) fs.copyFileSync(legal, path.join(stage, 'vscode-client', 'out', 'extension.js.LEGAL.txt'));
  fs.writeFileSync(path.join(stage, '.vscodeignore'), '**/*.pyc\n**/__pycache__/**\n');

  // vsce's secret scan (secretlint over every file) takes minutes on the ~8000 files of the
  // bundled PyPI wheels. Scan what we wrote ourselves here, refuse any .env file, and let vsce
  // skip its own scan.
  await scanFirstParty(stage);

  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.rmSync(out, { force: true });
  const hasLicense = ['LICENSE', 'LICENSE.md', 'LICENSE.txt'].some((n) => fs.existsSync(path.join(stage, n)));
  run(
    bin('vsce'),
    [
      'package',
      '--no-dependencies',
      '--target', target,
      '--out', out,
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      ...(hasLicense ? [] : ['--skip-license']),
      '--allow-package-all-secrets', // scanned above (first-party files) ...
      '--allow-package-env-file', // ... and checked above: there is none
    ],
    { cwd: stage },
  );
  const size = fs.statSync(out).size;
  console.log(`[package] ${path.relative(repo, out)} (${(size / 1e6).toFixed(1)} MB) in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

main().catch((err) => {
  console.error(`[package] failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
