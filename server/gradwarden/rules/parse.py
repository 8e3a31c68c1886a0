"""The file could not be analysed."""
from __future__ import annotations

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.base import Rule


class ParseError(Rule):
    """The file could not be decoded or parsed, so nothing in it was checked.

    Fix the syntax error (or the encoding) and the file is analysed again. The rest of the
    run goes on: other files are checked as usual.
    """

    event = "parse_error"
    code = "GW001"
    name = "parse-error"
    family = "-"
    severity = Severity.ERROR
    summary = "The file does not parse; it was not analysed."
    message = "{detail}"
