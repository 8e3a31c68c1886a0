"""Source text helpers: decoding (PEP 263, BOM, non-UTF-8), and ast byte offsets -> columns."""
from __future__ import annotations

import io
import tokenize
from typing import List, Optional, Tuple

# Texts longer than this are analysed in parts (engine/incremental/parts.py says why and how). Here, not
# there: every analysis asks, and importing the parts module costs a short check its start-up.
PARTS_ABOVE_CHARS = 1_000_000


def analysed_in_parts(text: str) -> bool:
    return len(text) > PARTS_ABOVE_CHARS


def decode_source(data: bytes) -> Tuple[Optional[str], str]:
    """Decode like the interpreter does (BOM, coding cookie). Returns (text, error)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return None, str(exc)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        return None, f"{exc}"
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, ""


class SourceText:
    """The analysed text with fast line lookup; converts ast's UTF-8 byte columns to characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: List[str] = text.splitlines()
        self.ascii = text.isascii()  # then a byte column is the character column (most files)

    def line(self, row: int) -> str:
        if 1 <= row <= len(self.lines):
            return self.lines[row - 1]
        return ""

    def char_col(self, row: int, byte_col: int) -> int:
        """0-based character column for a 0-based UTF-8 byte column on 1-based ``row``."""
        if self.ascii:
            return byte_col
        line = self.line(row)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
