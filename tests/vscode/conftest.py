"""The VS Code extension's tests: node unit tests, the bundled launcher, and the end-to-end test
in a real VS Code (code-server + Chromium). ``-m "not vscode_e2e"`` leaves the slow one out."""


def pytest_configure(config):
    config.addinivalue_line("markers", "vscode_e2e: drives a real VS Code (code-server + Chromium); about 1-2 minutes when the editor stack is cached")
