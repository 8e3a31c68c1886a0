"""Edits the server asks the client to make only to files the user may write.

A quick fix, fix-all or ``workspace/applyEdit`` sent for a file on disk that the invoking user
may not write (its mode or owner, a read-only mount, the immutable attribute: what
``gradwarden.atomicio.writable_reason`` checks for ``check --fix``) would change the editor's
buffer of a file that cannot be saved, or have a client that writes edited files straight to
disk fail half-way. So for such a file the fixes are offered as disabled actions with the reason
(clients that show disabled actions), or not at all, and the fix commands refuse with one clear
message. A document that is not a file on disk (unsaved, a notebook cell) is never refused.
"""
from __future__ import annotations

import os
from typing import Optional

from gradwarden.lsp.documents import uri_to_path


def unwritable(uri: str) -> Optional[str]:
    """Why the file behind ``uri`` may not be written by this user, or None (it may, or it is
    not a file on disk)."""
    path = uri_to_path(uri)
    if path is None or not os.path.lexists(path):
        return None
    from gradwarden.atomicio import writable_reason

    return writable_reason(path)


def refusal(uri: str, reason: str) -> str:
    return f"gradwarden: cannot fix {os.path.basename(uri_to_path(uri) or uri)}: {reason}"
