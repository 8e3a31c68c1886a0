"""Writing files so that a reader never sees half of one, and a user's protections hold.

- :func:`replace_atomically`: the bytes go to a temporary file in the same folder, which is then
  renamed over the target (atomic on POSIX and Windows). The result cache uses it directly
  (entries that concurrent runs may read while another writes; the cache is ours).
- :func:`replace_user_file`: ``--fix`` rewriting a user's file. A rename replaces whatever is
  at the path, whoever owns it and whatever its mode: renaming over a ``0444`` file owned by
  root, in a folder the user may write, would succeed and leave a new file owned by the user.
  So the target is first checked the way the kernel checks an ``open`` for writing (its mode,
  owner and ACLs, a read-only file system, the immutable attribute: ``access(2)``); a file the
  invoking user cannot write is refused with :class:`NotWritable` and left as it was. A file
  it may write keeps its owner, group and mode: the temporary file gets them before the rename,
  and where it cannot (a file owned by another user, writable through its group), or where a
  rename would not replace the same file (hard links) or is not allowed (a folder the user may
  not write), the bytes are written into the file itself instead. A symbolic link is followed:
  the file it points to is rewritten, the link stays a link.
"""
from __future__ import annotations

import errno
import os
import stat
import tempfile
from typing import Optional, Union

PathLike = Union[str, "os.PathLike[str]"]


class NotWritable(PermissionError):
    """The invoking user may not write the file: nothing was written."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(errno.EACCES, reason, path)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def replace_atomically(path: PathLike, data: bytes, mode: Optional[int], *, sync: bool = False,
                       prefix: str = ".gradwarden-", suffix: str = ".tmp",
                       owner: Optional[tuple] = None) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; ``mode`` sets the new
    file's permission bits (None: mkstemp's 0600), ``owner`` its ``(uid, gid)``; ``sync``
    flushes it to disk first."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        if owner is not None:
            os.chown(tmp, *owner)
        if mode is not None:
            os.chmod(tmp, mode)  # after chown, which clears set-user/group-ID bits
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def writable_reason(path: PathLike) -> Optional[str]:
    """Why the invoking user may not write ``path`` (None: it may). Checks what the kernel
    checks for a write (``access(2)`` with the real user: mode bits, ACLs, read-only mounts,
    the immutable attribute)."""
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if os.access(target, os.W_OK):
        return None
    try:  # which of the reasons: a plain open for writing says it best (EACCES, EPERM, EROFS)
        fd = os.open(target, os.O_WRONLY)
    except OSError as exc:
        code = exc.errno
    else:  # access() and open() disagree (effective vs real ids): trust neither, refuse
        os.close(fd)
        code = errno.EACCES
    if code == errno.EROFS:
        return "the file system is read-only"
    if code == errno.EPERM:
        return "the file is marked immutable or append-only (operation not permitted)"
    return f"permission denied: this user may not write it (mode {stat.filemode(st.st_mode)}, owner uid {st.st_uid})"


def replace_user_file(path: PathLike, data: bytes, *, sync: bool = True) -> None:
    """Rewrite a user's existing file with ``data``, or raise :class:`NotWritable` (nothing
    written) or ``OSError``. See the module docstring."""
    target = os.path.realpath(path)
    reason = writable_reason(target)
    if reason is not None:
        raise NotWritable(str(path), reason)
    st = os.stat(target)
    directory = os.path.dirname(target) or "."
    mine = st.st_uid == os.geteuid() or os.geteuid() == 0
    if mine and st.st_nlink == 1 and os.access(directory, os.W_OK | os.X_OK):
        try:
            replace_atomically(target, data, stat.S_IMODE(st.st_mode), sync=sync, owner=(st.st_uid, st.st_gid))
            return
        except PermissionError:
            pass  # the group cannot be given to the new file (a group the user is not in): in place
    _write_in_place(target, data, sync)


def _write_in_place(target: str, data: bytes, sync: bool) -> None:
    """Overwrite the file's content (owner, group, mode, links and inode stay). Not atomic: used
    only where a rename would lose what the file is."""
    with open(target, "r+b") as fh:
        fh.write(data)
        fh.truncate()
        if sync:
            fh.flush()
            os.fsync(fh.fileno())
