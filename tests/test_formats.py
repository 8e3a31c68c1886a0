"""Output formats: text, json, json-lines, github, sarif, statistics, the rules table."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gradwarden import __version__
from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Related, Severity, Span
from gradwarden.formats import (
    DOCS_URL,
    escape_github_data,
    escape_github_property,
    format_github,
    format_json,
    format_json_lines,
    format_sarif,
    format_statistics,
    format_text,
    github_anchor,
    rule_anchor,
    rules_markdown,
    rules_table,
    summary_line,
)
from gradwarden.rules import all_rules, get_rule

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def make(code="GW201", row=4, col=1, filename="a.py", severity=Severity.ERROR, message="in-place add_ modifies `y`",
         related=(), fixes=(), end=None) -> Diagnostic:
    end_row, end_col = end or (row, col + 6)
    return Diagnostic(code, message, severity, filename, Span(row, col, end_row, end_col), tuple(related),
                      tuple(fixes), rule=(get_rule(code).name if get_rule(code) else ""))


SAVE = Related(Span(3, 5, 3, 20), "`sigmoid` saved its output here", kind="save")
BACKWARD = Related(Span(5, 1, 5, 18), "backward raises here", kind="backward", filename="other.py")
DIAGS = [
    make("GW401", 9, 1, "b.py", related=(BACKWARD,)),
    make("GW201", 4, 1, "a.py", related=(SAVE,)),
    make("GW404", 2, 3, "a.py", severity=Severity.INFORMATION, message="loss accumulates"),
    make("GW502", 4, 1, "a.py", severity=Severity.WARNING, message="fused step"),
]


# --------------------------------------------------------------------------- text
def test_text_lines_sorted_with_related():
    out = format_text(DIAGS)
    assert out.splitlines() == [
        "a.py:2:3: GW404 info: loss accumulates",
        "a.py:4:1: GW201 error: in-place add_ modifies `y`",
        "  a.py:3:5: note: `sigmoid` saved its output here",
        "a.py:4:1: GW502 warning: fused step",
        "b.py:9:1: GW401 error: in-place add_ modifies `y`",
        "  other.py:5:1: note: backward raises here",
    ]


def test_text_color_only_when_asked():
    plain = format_text(DIAGS)
    assert "\x1b[" not in plain
    colored = format_text(DIAGS, color=True)
    assert "\x1b[" in colored
    assert ANSI.sub("", colored) == plain


def test_text_show_source():
    src = "import torch\nx = 1\ny = torch.sigmoid(x)\ny.add_(1)\n"
    d = make("GW201", 4, 3, "a.py", end=(4, 7))
    out = format_text([d], show_source=True, sources={"a.py": src}).splitlines()
    assert out[0] == "a.py:4:3: GW201 error: in-place add_ modifies `y`"
    assert out[2] == "  4 | y.add_(1)"
    assert out[3] == "    |   ^^^^"
    # unknown source: just the header
    assert format_text([d], show_source=True, sources={}).splitlines() == [out[0]]


def test_text_empty():
    assert format_text([]) == ""


@pytest.mark.parametrize(
    "diags, line",
    [
        ([], "All checks passed!"),
        ([make()], "Found 1 error."),
        ([make(), make()], "Found 2 errors."),
        (DIAGS, "Found 4 problems (2 errors, 1 warning, 1 information)."),
        ([make(severity=Severity.WARNING)], "Found 1 problem (1 warning)."),
        ([make(severity=Severity.HINT), make(severity=Severity.HINT)], "Found 2 problems (2 hints)."),
    ],
)
def test_summary(diags, line):
    assert summary_line(diags) == line


def test_statistics_text_and_json():
    diags = DIAGS + [make("GW201", 7, 1, "c.py")]
    text = format_statistics(diags)
    rows = [re.split(r"\t", line) for line in text.splitlines()]
    assert [r[1].strip() for r in rows] == ["GW201", "GW401", "GW404", "GW502"]
    assert rows[0][0].strip() == "2" and rows[0][3] == "saved-tensor-modified"
    data = json.loads(format_statistics(diags, output_format="json"))
    assert data[0] == {"code": "GW201", "name": "saved-tensor-modified", "count": 2, "severity": "error"}
    assert format_statistics([]) == ""


# --------------------------------------------------------------------------- json
def test_json_sorted_and_complete():
    fix = Fix("clone", "Clone before the in-place write", safe=True, preferred=True,
              edits=(Edit(Span(4, 1, 4, 2), "y = y.clone()\n"),))
    diags = DIAGS + [make("GW201", 1, 1, "a.py", fixes=(fix,))]
    data = json.loads(format_json(diags))
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [
        ("a.py", 1, "GW201"), ("a.py", 2, "GW404"), ("a.py", 4, "GW201"), ("a.py", 4, "GW502"), ("b.py", 9, "GW401"),
    ]
    first = data[0]
    assert {"code", "message", "severity", "filename", "location", "end_location", "related", "fix"} <= set(first)
    assert first["fix"]["applicability"] == "safe"
    assert data[2]["related"][0] == {
        "message": "`sigmoid` saved its output here", "kind": "save", "filename": "a.py",
        "location": {"row": 3, "column": 5}, "end_location": {"row": 3, "column": 20},
    }
    assert data[4]["related"][0]["filename"] == "other.py"
    assert data[1]["severity"] == "information"
    assert json.loads(format_json([])) == []


def test_json_lines():
    lines = format_json_lines(DIAGS).splitlines()
    assert len(lines) == 4
    assert [json.loads(x)["code"] for x in lines] == ["GW404", "GW201", "GW502", "GW401"]


# --------------------------------------------------------------------------- github
def test_github_escaping_rules():
    assert escape_github_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_github_property("a:b,c%d\ne") == "a%3Ab%2Cc%25d%0Ae"
    assert escape_github_data("a:b,c") == "a:b,c"  # only properties escape : and ,


def test_github_annotations():
    d = make("GW201", 4, 2, "dir,x/we:ird%.py", message="50% wrong: a, b\nsecond line", end=(4, 8))
    w = make("GW502", 1, 1, "a.py", severity=Severity.WARNING, message="m")
    i = make("GW404", 1, 1, "a.py", severity=Severity.INFORMATION, message="m")
    h = make("GW404", 2, 1, "a.py", severity=Severity.HINT, message="m")
    lines = format_github([d, w, i, h]).splitlines()
    assert lines[0] == "::notice file=a.py,line=1,col=1,endLine=1,endColumn=7,title=gradwarden (GW404)::m"
    assert lines[1] == "::warning file=a.py,line=1,col=1,endLine=1,endColumn=7,title=gradwarden (GW502)::m"
    assert lines[2].startswith("::notice ")
    assert lines[3] == (
        "::error file=dir%2Cx/we%3Aird%25.py,line=4,col=2,endLine=4,endColumn=8,title=gradwarden (GW201)"
        "::50%25 wrong: a, b%0Asecond line"
    )


def test_github_related_as_extra_lines():
    out = format_github([make(related=(SAVE,))])
    assert out.count("\n") == 1
    assert out.rstrip("\n").endswith("::in-place add_ modifies `y`%0Aa.py:3:5: note: `sigmoid` saved its output here")


# --------------------------------------------------------------------------- sarif
def test_sarif_shape(tmp_path):
    errors = ["internal error while checking z.py: RuntimeError: boom"]
    abs_file = str(tmp_path / "abs file.py")
    diags = DIAGS + [make("GW201", 1, 1, abs_file)]
    doc = json.loads(format_sarif(diags, errors=errors, root=tmp_path))
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    assert len(doc["runs"]) == 1
    run = doc["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    driver = run["tool"]["driver"]
    assert driver["name"] == "gradwarden" and driver["version"] == __version__
    codes = [r.code for r in all_rules()]
    assert [r["id"] for r in driver["rules"]] == codes
    for rule_json, rule in zip(driver["rules"], all_rules()):
        assert rule_json["name"] == rule.name
        assert rule_json["shortDescription"]["text"] == rule.summary
        assert rule_json["fullDescription"]["text"]
        assert rule_json["helpUri"] == f"{DOCS_URL}#{rule_anchor(rule)}"
        assert rule_json["defaultConfiguration"]["level"] in ("error", "warning", "note")
    gw404 = next(r for r in driver["rules"] if r["id"] == "GW404")
    assert gw404["defaultConfiguration"]["level"] == "note"

    results = run["results"]
    assert len(results) == len(diags)
    for res in results:
        assert set(res) >= {"ruleId", "level", "message", "locations"}
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        loc = res["locations"][0]["physicalLocation"]
        assert set(loc["region"]) == {"startLine", "startColumn", "endLine", "endColumn"}
        assert res["level"] in ("error", "warning", "note")
    by_code = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r for r in results}
    gw201 = by_code[("GW201", "a.py")]
    assert gw201["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert gw201["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 7}
    assert gw201["relatedLocations"] == [{
        "id": 0,
        "physicalLocation": {"artifactLocation": {"uri": "a.py", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 20}},
        "message": {"text": "`sigmoid` saved its output here"},
    }]
    assert by_code[("GW404", "a.py")]["level"] == "note"
    assert by_code[("GW502", "a.py")]["level"] == "warning"
    absolute = by_code[("GW201", Path(abs_file).as_uri())]
    assert "uriBaseId" not in absolute["locations"][0]["physicalLocation"]["artifactLocation"]
    assert "%20" in Path(abs_file).as_uri()
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert inv["toolExecutionNotifications"][0]["message"]["text"] == errors[0]


def test_sarif_empty_run_is_valid():
    doc = json.loads(format_sarif([]))
    run = doc["runs"][0]
    assert run["results"] == []
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_unknown_code_has_no_rule_index():
    doc = json.loads(format_sarif([make("XX999")]))
    assert "ruleIndex" not in doc["runs"][0]["results"][0]


# --------------------------------------------------------------------------- notebooks and fixes
def _cell_map():
    from gradwarden.lsp.documents import build_notebook_program
    from gradwarden.notebook import CellMap

    # cells: 0 markdown, 1 code (2 rows), 2 code (3 rows): program rows 1-2 and 3-5
    return CellMap(build_notebook_program([("0", "# md", False), ("1", "a = 1\nb = 2", True),
                                           ("2", "c = 3\nd = 4\ne = 5", True)]))


def test_notebook_positions_in_every_format():
    from gradwarden.formats import cell_message, position

    nbs = {"nb.ipynb": _cell_map()}
    d = make("GW201", 4, 1, "nb.ipynb", message="saved at line 1, fails at line 5",
             related=(Related(Span(1, 5, 1, 9), "saved here", kind="save"),))
    assert position("nb.ipynb", d.span, nbs) == "nb.ipynb:cell 3:2:1"
    assert position("a.py", d.span, nbs) == "a.py:4:1"
    assert cell_message(d.message, "nb.ipynb", nbs) == "saved at cell 2, line 1, fails at cell 3, line 3"
    text = format_text([d], notebooks=nbs).splitlines()
    assert text == ["nb.ipynb:cell 3:2:1: GW201 error: saved at cell 2, line 1, fails at cell 3, line 3",
                    "  nb.ipynb:cell 2:1:5: note: saved here"]
    (j,) = json.loads(format_json([d], notebooks=nbs))
    assert (j["cell"], j["location"], j["related"][0]["cell"]) == (3, {"row": 2, "column": 1}, 2)
    gh = format_github([d], notebooks=nbs)
    assert gh.startswith("::error file=nb.ipynb,title=gradwarden (GW201)::nb.ipynb:cell 3:2:1: saved at cell 2")
    res = json.loads(format_sarif([d], notebooks=nbs))["runs"][0]["results"][0]
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert res["relatedLocations"][0]["physicalLocation"]["properties"] == {"cell": 2}


def test_fix_index_drives_marks_json_and_sarif():
    from gradwarden.engine.diagnostic import Edit, Fix
    from gradwarden.fixability import Chosen, FixIndex, fixable_line

    safe = make("GW201", 4, 1, "a.py")
    unsafe = make("GW402", 6, 1, "a.py")
    none = make("GW404", 8, 1, "a.py", severity=Severity.INFORMATION)
    edit = Edit(Span(4, 1, 4, 7), "y = y + 1")
    index = FixIndex(chosen={id(safe): Chosen(Fix("augassign_to_binop", "Write y = y + 1", True, edits=(edit,)), True),
                             id(unsafe): Chosen(Fix("detach", "Detach", False, edits=(edit,)), False)})
    text = format_text([safe, unsafe, none], fixes=index).splitlines()
    assert text[0].startswith("a.py:4:1: GW201 [*] error:") and "[*]" not in text[1] + text[2]
    assert fixable_line(index, [safe, unsafe, none]) == "[*] 1 fixable with --fix (1 more with --unsafe-fixes)"
    assert fixable_line(FixIndex(), [none]) == ""
    js = json.loads(format_json([safe, unsafe, none], fixes=index))
    assert [d["fix"] and d["fix"]["applicability"] for d in js] == ["safe", "unsafe", None]
    assert js[0]["fix"]["edits"] == [{"content": "y = y + 1", "location": {"row": 4, "column": 1},
                                      "end_location": {"row": 4, "column": 7}}]
    results = json.loads(format_sarif([safe, unsafe, none], fixes=index))["runs"][0]["results"]
    assert [r.get("properties", {}).get("fixApplicability") for r in results] == ["safe", "unsafe", None]
    repl = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert repl == {"deletedRegion": {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 7},
                    "insertedContent": {"text": "y = y + 1"}}


# --------------------------------------------------------------------------- rule docs
def test_github_anchor():
    assert github_anchor("GW201 `saved-tensor-modified`") == "gw201-saved-tensor-modified"
    assert github_anchor("Hello, World! (v2)") == "hello-world-v2"
    assert rule_anchor(get_rule("GW201")) == "gw201-saved-tensor-modified"


def test_rules_table():
    lines = rules_table(all_rules()).splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "SUMMARY"]
    assert len(lines) == len(all_rules()) + 1
    row = next(line for line in lines if line.startswith("GW404"))
    assert "running-loss-keeps-graph" in row and "information" in row


def test_rules_markdown_index_links_every_section():
    md = rules_markdown(all_rules())
    assert md.startswith("# gradwarden rules\n")
    headings = {github_anchor(h[3:]) for h in md.splitlines() if h.startswith("## ")}
    links = re.findall(r"\]\(#([^)]+)\)", md)
    assert len(links) == len(all_rules())
    assert set(links) <= headings
