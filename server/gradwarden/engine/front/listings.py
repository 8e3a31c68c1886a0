"""Does this file or folder exist: answered from one listing per folder instead of one ``stat``
per question (import resolution asks, for every import of every analysed file, whether
``name.py`` or ``name/__init__.py`` is in each folder from the file's up to the project root:
torch-geometric's ``check`` asked some 30,000 times about 58 folders).

A listing is kept in a scope its caller gives: the run's answers (``entry.run_answers``: a
``check``, whose files do not change while it runs) or one analysis's own dict (the language
server: each analysis lists afresh, so a file created in the workspace is seen by the next
one). Without a scope each question is a ``stat`` as before.

The answers are those of the probes they replace (``os.path.isfile``/``isdir``/``exists``,
which follow symbolic links): an entry's kind is taken from ``DirEntry.is_file``/``is_dir``,
which follow links too; a name absent from the listing is absent, except where the folder
holds a name equal to it but for case (a case-insensitive file system would answer ``stat``
for it): then, as for a link that points nowhere or a folder that cannot be listed, the
question is a ``stat``. Paths are ``str`` (``os.path.join``), never ``pathlib.Path``, in this
inner loop.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, FrozenSet, Optional, Tuple

_FILE, _DIR, _OTHER, _ASK = 1, 2, 3, 0  # _ASK: answer with a stat (a dangling link, an error)

Listing = Tuple[Dict[str, int], FrozenSet[str]]  # name -> kind, the names casefolded


def _list(folder: str) -> Optional[Listing]:
    """The names of ``folder`` and their kinds; None when it cannot be listed for another reason
    than not being a folder (then every question about it is a stat)."""
    kinds: Dict[str, int] = {}
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                try:
                    if e.is_file():
                        kind = _FILE
                    elif e.is_dir():
                        kind = _DIR
                    else:
                        # a link that points nowhere does not exist for stat; a fifo or socket does
                        kind = _ASK if e.is_symlink() else _OTHER
                except OSError:
                    kind = _ASK
                kinds[e.name] = kind
    except (FileNotFoundError, NotADirectoryError):
        pass  # not a folder: nothing in it exists (stat says ENOENT / ENOTDIR alike)
    except (OSError, ValueError):
        return None
    return kinds, frozenset(n.casefold() for n in kinds)


def _kind(path: str, scope: Optional[dict]) -> Optional[int]:
    """The kind of ``path`` from its folder's listing; None: ask stat."""
    if scope is None:
        return None
    folder, name = os.path.split(path)
    if not name or not name.isascii():
        return None  # a name a file system may normalise (NFD on macOS): ask stat
    key = ("listing", folder)
    hit = scope.get(key)
    if hit is None:
        hit = scope[key] = (_list(folder),)
    listing = hit[0]
    if listing is None:
        return None
    kinds, folded = listing
    kind = kinds.get(name)
    if kind is None:
        return None if name.casefold() in folded else -1
    return None if kind == _ASK else kind


# Asked with pathlib where no listing answers, as the probes these replace were (an unreadable
# folder raises as it did).
def is_file(path: str, scope: Optional[dict]) -> bool:
    kind = _kind(path, scope)
    return Path(path).is_file() if kind is None else kind == _FILE


def is_dir(path: str, scope: Optional[dict]) -> bool:
    kind = _kind(path, scope)
    return Path(path).is_dir() if kind is None else kind == _DIR


def exists(path: str, scope: Optional[dict]) -> bool:
    kind = _kind(path, scope)
    return Path(path).exists() if kind is None else kind > 0
