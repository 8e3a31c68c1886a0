"""Replacing a file so that a reader never sees half of it: the bytes go to a temporary file
in the same folder, which is then renamed over the target (atomic on POSIX and Windows). Used
by ``--fix`` (the user's files, their permission bits kept, synced to disk) and by the result
cache (entries that concurrent runs may read while another writes)."""
from __future__ import annotations

import os
import tempfile
from typing import Optional, Union

PathLike = Union[str, "os.PathLike[str]"]


def replace_atomically(path: PathLike, data: bytes, mode: Optional[int], *, sync: bool = False,
                       prefix: str = ".gradwarden-", suffix: str = ".tmp") -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; ``mode`` sets the new
    file's permission bits (None: mkstemp's 0600); ``sync`` flushes it to disk first."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
