// Usage: node tests/editors/record_vscode_capabilities.js <repo root with node_modules> > profile.json
// Records tests/lsp/profiles/visual_studio_code_v1.100.3.json (see "recorded" in that file).
// Compute the ClientCapabilities that vscode-languageclient sends, with a stub `vscode` module.
const Module = require('module');
function deep(name) {
  const fn = function () { return deep(name + '()'); };
  return new Proxy(fn, {
    get(t, p) {
      if (p === Symbol.toPrimitive) return () => '1.100.3';
      if (p === 'then') return undefined;
      if (p === Symbol.iterator) return function* () {};
      if (p === 'length') return 0;
      if (p === 'version') return '1.100.3';
      if (p === 'appName') return 'Visual Studio Code';
      return deep(name + '.' + String(p));
    },
    construct() { return deep('new ' + name); },
    apply() { return deep(name + '()'); },
  });
}
const origLoad = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === 'vscode') return deep('vscode');
  return origLoad.apply(this, arguments);
};
const root = process.argv[2];
const { LanguageClient } = require(root + '/node_modules/vscode-languageclient/node');
const client = new LanguageClient('gw', 'gw', { command: 'x' }, {
  documentSelector: [{ scheme: 'file', language: 'python' }, { notebook: { notebookType: 'jupyter-notebook' }, language: 'python' }],
});
const caps = client.computeClientCapabilities();
const pkg = require(root + '/node_modules/vscode-languageclient/package.json');
process.stdout.write(JSON.stringify({ clientInfo: { name: 'Visual Studio Code', version: '1.100.3' }, languageclient: pkg.version, capabilities: caps }, null, 2));
