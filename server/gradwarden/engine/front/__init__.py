"""The Python front end: source text (decoding, positions: ``source``), the trigger pre-pass
that decides what is worth interpreting (``triggers``, ``plainwrites``), walks over syntax trees
(``body``), the calls a file makes (``callsites``), the user's own imported modules
(``imports``: the project root, ``sys.path`` insertions; ``listings``: one folder listing per
folder instead of a ``stat`` per probe, kept for a ``check`` run) and the project's import graph
(``projectgraph``: which scripts import a module, for the language server).

Works on text and ``ast`` only: knows nothing of torch or of the abstract state.

May import: the shared models (``engine.diagnostic``, ``engine.events``, ``engine.entry``) and
itself.
"""
