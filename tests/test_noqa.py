"""`# noqa` comments: parsing one line, file-level exemptions, and filtering diagnostics."""
from __future__ import annotations

import pickle
import textwrap

import pytest

from gradwarden.engine.diagnostic import Diagnostic, Severity, Span
from gradwarden.noqa import ALL, build_noqa_map, file_noqa_codes, filter_noqa, noqa_codes_on_line


def diag(code: str, row: int, col: int = 1) -> Diagnostic:
    return Diagnostic(code, "msg", Severity.ERROR, "f.py", Span(row, col, row, col + 1))


# --------------------------------------------------------------------------- one line
@pytest.mark.parametrize(
    "line",
    [
        "y += 1  # noqa",
        "y += 1  #noqa",
        "y += 1  # NOQA",
        "y += 1  # NoQa",
        "y += 1  # noqa this is fine",
        "y += 1  # type: ignore # noqa",
        "y += 1  # gradwarden: noqa",
        "y += 1  # Gradwarden:NOQA",
        "# noqa",
    ],
)
def test_blanket(line):
    assert noqa_codes_on_line(line) is ALL


@pytest.mark.parametrize(
    "line, codes",
    [
        ("y += 1  # noqa: GW201", {"GW201"}),
        ("y += 1  # noqa:GW201", {"GW201"}),
        ("y += 1  # noqa : GW201", {"GW201"}),
        ("y += 1  # noqa: GW201, GW303", {"GW201", "GW303"}),
        ("y += 1  # noqa: GW201,GW303", {"GW201", "GW303"}),
        ("y += 1  # noqa: GW201 GW303", {"GW201", "GW303"}),
        ("y += 1  # noqa: gw201", {"GW201"}),
        ("y += 1  # NOQA: Gw201", {"GW201"}),
        ("y += 1  # gradwarden: noqa: GW201", {"GW201"}),
        ("y += 1  # noqa: GW201 -- the graph is rebuilt below", {"GW201"}),
        ("y += 1  # noqa: GW201  # noqa: GW303", {"GW201", "GW303"}),
        ("y += 1  # noqa: E501, GW201", {"E501", "GW201"}),
    ],
)
def test_codes(line, codes):
    assert noqa_codes_on_line(line) == frozenset(codes)


@pytest.mark.parametrize(
    "line",
    [
        "y += 1",
        "y += 1  # a comment",
        "y += 1  # noqa:",  # no code after the colon: not a directive (ruff)
        "y += 1  # noqa: , ",
        "y += 1  # noqanything",
        "y += 1  # knoqa",
        "noqa = 1",
    ],
)
def test_not_a_directive(line):
    assert noqa_codes_on_line(line) is None


def test_blanket_wins_over_codes_on_the_same_line():
    assert noqa_codes_on_line("x  # noqa: GW201  # noqa") is ALL


def test_all_sentinel_pickles_as_itself():
    assert pickle.loads(pickle.dumps(ALL)) is ALL
    assert repr(ALL) == "ALL"


# --------------------------------------------------------------------------- file level
@pytest.mark.parametrize(
    "comment, expected",
    [
        ("# gradwarden: noqa", ALL),
        ("#gradwarden:noqa", ALL),
        ("# GRADWARDEN: NOQA", ALL),
        ("# gradwarden: noqa: GW2, GW401", frozenset({"GW2", "GW401"})),
        ("# noqa", None),  # a plain noqa is only ever line-level
        ("# gradwarden: noqa:", None),
    ],
)
def test_file_noqa_codes(comment, expected):
    assert file_noqa_codes(comment) == expected


# --------------------------------------------------------------------------- filtering
SOURCE = textwrap.dedent(
    """\
    import torch
    a = 1  # noqa
    b = 2  # noqa: GW201
    c = 3  # noqa: GW201, GW303
    d = "# noqa"
    e = 5
    f = 6  # noqa: gw4
    """
)


def test_filter_line_level():
    diags = [
        diag("GW201", 2), diag("GW401", 2),  # blanket
        diag("GW201", 3), diag("GW303", 3),  # only GW201
        diag("GW303", 4), diag("GW501", 4),
        diag("GW201", 5),  # "# noqa" inside a string is not a comment
        diag("GW201", 6),
        diag("GW401", 7), diag("GW404", 7), diag("GW501", 7),  # prefixes work
    ]
    kept = filter_noqa(diags, SOURCE)
    assert [(d.code, d.row) for d in kept] == [
        ("GW303", 3), ("GW501", 4), ("GW201", 5), ("GW201", 6), ("GW501", 7),
    ]


def test_filter_uses_start_row_only():
    src = "x = f(\n    a)  # noqa\n"
    assert filter_noqa([diag("GW201", 1)], src) == [diag("GW201", 1)]
    assert filter_noqa([diag("GW201", 2)], src) == []


def test_filter_multiline_string_and_continuation():
    src = textwrap.dedent(
        '''\
        x = f("""
        text
        """)  # noqa: GW201
        y = 1 + \\
            2  # noqa
        z = 3
        '''
    )
    kept = filter_noqa([diag("GW201", 1), diag("GW201", 2), diag("GW303", 1), diag("GW201", 4), diag("GW201", 6)], src)
    assert [(d.code, d.row) for d in kept] == [("GW303", 1), ("GW201", 6)]


def test_filter_file_level_blanket():
    src = "# gradwarden: noqa\nimport torch\ny += 1\n"
    assert filter_noqa([diag("GW201", 3), diag("GW001", 1)], src) == []


def test_filter_file_level_codes():
    src = "import torch\n# gradwarden: noqa: GW2\ny += 1\n"
    kept = filter_noqa([diag("GW201", 3), diag("GW202", 1), diag("GW401", 3)], src)
    assert [d.code for d in kept] == ["GW401"]


def test_trailing_gradwarden_noqa_is_line_level_only():
    src = "a = 1  # gradwarden: noqa\nb = 2\n"
    kept = filter_noqa([diag("GW201", 1), diag("GW201", 2)], src)
    assert [d.row for d in kept] == [2]


def test_filter_on_untokenizable_source_falls_back_to_lines():
    src = "x = (  # noqa\n"  # unclosed paren: tokenize fails
    assert filter_noqa([diag("GW001", 1)], src) == []
    assert filter_noqa([diag("GW001", 2)], src) == [diag("GW001", 2)]


def test_filter_without_source_or_diagnostics():
    assert filter_noqa([], SOURCE) == []
    assert filter_noqa([diag("GW201", 2)], None) == [diag("GW201", 2)]
    assert filter_noqa([diag("GW201", 2)], "") == [diag("GW201", 2)]


def test_noqa_map_records_lines():
    m = build_noqa_map(SOURCE)
    assert m.lines[2] is ALL
    assert m.lines[3] == frozenset({"GW201"})
    assert 5 not in m.lines
    assert m.file_codes is None


def test_rows_are_counted_like_the_tokenizer():
    src = "a = 1\x0c  # form feed is not a line break\nb = 2  # noqa\r\nc = 3\r\n"
    kept = filter_noqa([diag("GW201", 2), diag("GW201", 3)], src)
    assert [d.row for d in kept] == [3]
