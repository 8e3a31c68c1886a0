"""Timeline pictures: for each finding, one lane per storage, its events on a time axis (saves
with the version they record, the write that bumps it, the backward that checks it, the freed
graph or the optimizer step in between), as SVG inside one self-contained HTML page.

- ``scene``: the data of one picture (lanes, marks in time order);
- ``from_static``: a static ``Diagnostic`` -> scene; ``from_run``: a debug run's finding -> scene;
- ``svg``: scene -> SVG; ``page``: scenes -> HTML; ``reports``: the ``check`` and ``debug`` reports.

Used by ``gradwarden check --output-format html``, ``gradwarden debug --report``, and the
language server's ``gradwarden.showTimeline`` command (the VS Code webview).
"""
