"""The language server (``gradwarden serve``): pygls wiring around the same engine as the CLI.

Layout (``server.py`` is thin; everything it calls is a plain function or a small class that
the unit tests use without a client):

- ``server.py``     pygls handlers: LSP request/notification -> helper call -> LSP result
- ``documents.py``  open documents and notebooks: versions, LSP line splitting, cell mapping
- ``positions.py``  engine positions (1-based rows, character columns) <-> LSP positions
- ``convert.py``    Diagnostic -> lsprotocol Diagnostic (related info, codeDescription, data)
- ``analysis.py``   debounce, cancellation of stale analyses, last-good results, settings
- ``worker.py``     the analysis worker processes (never the event loop's thread)
- ``jobs.py``       what a worker runs: diagnose, explain, fix edits (pure functions)
- ``actions.py``    code actions: quick fixes, ``source.fixAll.gradwarden``, ``# noqa``
- ``hover.py``      version-counter timeline and rule documentation, as Markdown
- ``commands.py``   workspace check (with ``$/progress``), fix-all, runtime debug run
- ``options.py``    editor settings (initializationOptions, didChangeConfiguration)
- ``cli.py``        the ``serve`` subcommand

Importing this package is cheap: pygls is imported only when the server starts. The server
never imports torch and never runs user code (``gradwarden.debugRun`` hands that to the
runtime bridge, on an explicit command only).
"""
