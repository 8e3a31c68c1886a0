// esbuild: vscode-client/src/extension.ts -> vscode-client/out/extension.js (one CommonJS bundle,
// vscode-languageclient and @vscode/python-extension inside, `vscode` external).
//   node vscode-client/scripts/build.mjs [--dev]   (--dev: source map, no minification)
import * as esbuild from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const client = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dev = process.argv.includes('--dev');

export async function build({ dev = false } = {}) {
  const result = await esbuild.build({
    entryPoints: [path.join(client, 'src', 'extension.ts')],
    outfile: path.join(client, 'out', 'extension.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20', // VS Code 1.91's Electron (Node 20)
    external: ['vscode'],
    sourcemap: dev,
    minify: !dev,
    keepNames: true,
    legalComments: 'linked',
    logLevel: 'warning',
    metafile: true,
  });
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  console.log(`[build] vscode-client/out/extension.js (${(bytes / 1024).toFixed(0)} KiB${dev ? ', dev' : ''})`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  build({ dev }).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
