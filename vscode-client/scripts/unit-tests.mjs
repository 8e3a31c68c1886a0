// `npm test`: the extension's own logic (no VS Code needed) under node's test runner.
// Each vscode-client/test/*.test.ts is bundled with esbuild into out-test/ and run with `node --test`.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testDir = path.join(client, 'test');
const outDir = path.join(client, 'out-test');
const tests = fs.readdirSync(testDir).filter((f) => f.endsWith('.test.ts')).sort();
if (!tests.length) {
  console.error(`no tests in ${testDir}`);
  process.exit(1);
}
fs.rmSync(outDir, { recursive: true, force: true });
await esbuild.build({
  entryPoints: tests.map((t) => path.join(testDir, t)),
  outdir: outDir,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'], // a test that reaches `vscode` fails loudly: the logic under test must not
  sourcemap: 'inline',
  logLevel: 'warning',
});
const files = tests.map((t) => path.join(outDir, t.replace(/\.ts$/, '.js')));
const extra = process.argv.slice(2);
const res = spawnSync(process.execPath, ['--enable-source-maps', '--test', ...extra, ...files], { stdio: 'inherit' });
process.exit(res.status ?? 1);
