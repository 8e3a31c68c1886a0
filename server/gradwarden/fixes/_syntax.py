"""Does a text still compile after a fix's edits? Asked for every fix realised (a JSON report
realises each finding's fixes several times, each on a file of hundreds of lines), so it first
compiles only the top-level statements the edits touch.

When that part compiles, so does the whole new text. The original text compiles (the engine
analysed it), and each top-level statement's text, as libcst delimits it (leading comment
lines included; ``LazyPositions.extent`` checks it against the text), starts at column 0 on a
line that no bracket, string or backslash continues. The unchanged text before the part ends in
that clean state, so it tokenizes as before; a part that compiles on its own ends in it too
(complete statements, nothing left open, a final line end), so the unchanged text after it
tokenizes as before as well, and every statement compiles where it stands. What the compiler
checks *across* module-level statements is kept out: a text that mentions ``__future__``
(future imports must come first and change how the rest compiles) or holds a module-level
``global`` (it must precede the name's uses) is compiled whole. When the part does not compile,
the whole text is compiled to be sure (a part can end inside a bracket the text after it
closes), so the answer is always ``compile``'s.
"""
from __future__ import annotations

import bisect
import re
import warnings
from typing import Optional, Sequence

from gradwarden.fixes._doc import Doc, TextEdit, apply_text_edits

_MODULE_GLOBAL = re.compile(r"^global\b", re.M)


def compiles(text: str, filename: str = "<fix>") -> bool:
    """``compile``'s verdict, without its warnings (an invalid escape in a string of the user's
    file is not ours to print, once per fix tried)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def compiles_after(doc: Doc, edits: Sequence[TextEdit], new_text: Optional[str] = None,
                   filename: str = "<fix>") -> bool:
    """Whether ``doc``'s text with ``edits`` applied (``new_text``, when already made)
    compiles; ``doc``'s own text must compile."""
    part = touched_part(doc, edits)
    if part is not None and compiles(part, filename):
        return True
    if new_text is None:
        new_text = apply_text_edits(doc.text, edits)
    return compiles(new_text, filename)


def touched_part(doc: Doc, edits: Sequence[TextEdit]) -> Optional[str]:
    """The new text of the top-level statements the edits touch, or None when a part cannot
    answer for the whole (see the module's docstring)."""
    text = doc.text
    if not edits or "__future__" in text or _MODULE_GLOBAL.search(text) or not doc.ok:
        return None
    positions = doc._pos
    if positions is None or not positions.starts:
        return None
    starts = positions.starts
    touched = set()
    for e in edits:
        first = bisect.bisect_right(starts, e.start) - 1  # an insertion at a start goes with that statement
        last = first if e.end == e.start else bisect.bisect_left(starts, e.end) - 1
        if first < 0 or last < first:
            return None  # in the module's header lines
        touched.update((first, last))
    head = positions.extent(min(touched))
    tail = positions.extent(max(touched))
    if head is None or tail is None:
        return None
    begin, end = head[0], tail[1]
    if any(e.start < begin or e.end > end for e in edits):
        return None  # in the module's footer lines
    part = apply_text_edits(text[begin:end], [TextEdit(e.start - begin, e.end - begin, e.content) for e in edits])
    if "__future__" in part or _MODULE_GLOBAL.search(part):
        return None
    if end < len(text) and not part.endswith(("\n", "\r")):
        return None  # the next statement would continue its last line
    return part
