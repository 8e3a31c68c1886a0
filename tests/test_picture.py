"""The timeline pictures of ``gradwarden check --output-format html``: one self-contained HTML page
with, per finding, an SVG whose events are the story the engine tells (created, saved at a
version, the write that bumps it, the backward that expects it, the freed graph, the step), in
time order, each linked to its source line; read back by parsing the SVG."""
from __future__ import annotations

import json
from pathlib import Path

from gradwarden import cli
from gradwarden.config import default_settings
from gradwarden.picture.from_static import scene_of
from gradwarden.picture.page import Sources, render_page
from gradwarden.picture.scene import KINDS, Mark, Site, time_order
from gradwarden.runner import diagnose
from picture_checks import events, page_facts, self_contained_problems, svgs, versions_in_order

ROOT = Path(__file__).resolve().parents[1]


def html_of(capsys, *args: str) -> str:
    code = cli.main(["check", "--output-format", "html", "--no-cache", *args])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return out


def _all_diagnostics(paths):
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for d in diagnose(text, str(path), default_settings(ROOT)):
            yield d


def test_every_finding_of_the_cases_has_a_picture(cases_dir):
    """Each diagnostic of the labelled cases and the examples draws: at least one lane, its own
    site marked once, every event a known kind; a version story in counter order."""
    paths = sorted(cases_dir.rglob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    seen_codes = set()
    n = 0
    for d in _all_diagnostics(paths):
        scene = scene_of(d)
        n += 1
        seen_codes.add(d.code)
        assert scene.lanes and scene.marks, d
        assert sum(m.primary for m in scene.marks) == 1, (d, scene.marks)
        assert all(m.kind in KINDS for m in scene.marks), scene.marks
        assert all(m.lane in {ln.key for ln in scene.lanes} for m in scene.marks)
        if d.timeline:  # the version-counter rules: the counter orders the story
            saves = [m for m in scene.marks if m.kind == "save"]
            writes = [m.version for m in scene.marks if m.kind in ("write", "step") and m.version is not None]
            assert writes == sorted(writes), scene.marks
            backward = scene.marks[-1]
            assert backward.kind == "backward", scene.marks
            assert backward.expects == saves[0].version and backward.finds is not None
            assert backward.finds > backward.expects  # the mismatch that raises
            breaking = [m for m in scene.marks if m.breaks]
            assert len(breaking) == 1 and breaking[0].version == backward.expects + 1
            assert scene.marks.index(saves[0]) < scene.marks.index(breaking[0])
    assert n >= 50 and {"GW101", "GW201", "GW402", "GW501", "GW601"} <= seen_codes


def test_time_is_the_version_counter_not_the_row():
    """A module defined above its call, a loop writing above its backward: rows lie, versions
    do not. Without versions, the kind's place in the story (save, freed, backward) orders."""
    marks = [Mark("l", "backward", Site("a.py", 30), "bw", expects=1, finds=2),
             Mark("l", "write", Site("a.py", 40), "w2", version=2, version_from=1),
             Mark("l", "save", Site("a.py", 50), "save", version=1),
             Mark("l", "write", Site("a.py", 60), "w1", version=1, version_from=0),
             Mark("l", "created", Site("a.py", 70), "created", version=0)]
    assert [m.label for m in time_order(marks)] == ["created", "w1", "save", "w2", "bw"]
    graph = [Mark("g", "backward", Site("a.py", 34), "second"), Mark("g", "freed", Site("a.py", 36), "first"),
             Mark("g", "save", Site("a.py", 21), "saved")]
    assert [m.label for m in time_order(graph)] == ["saved", "first", "second"]


def test_check_html_draws_every_finding(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    html = html_of(capsys, "examples/")
    json_out = json.loads(cli.main(["check", "--output-format", "json", "--no-cache", "examples/"]) and
                          capsys.readouterr()[0])
    pictures = svgs(html)
    facts = page_facts(html)
    assert len(pictures) == len(json_out) == facts.sections >= 7
    assert [p.get("data-code") for p in pictures] == [d["code"] for d in json_out]  # the findings, in order
    # elements per event: one SVG event per line of the event list, in the same order
    assert sum(len(events(p)) for p in pictures) == facts.event_items
    assert self_contained_problems(html) == []
    assert "prefers-color-scheme:dark" in html.replace(" ", "") and 'name="color-scheme"' in html


def test_the_version_story_is_drawn_with_its_numbers(capsys, monkeypatch):
    """resnet_block_inplace: `out` created (v0), ReLU(inplace) bumps it to 1, ReLU saves it at 1,
    `+=` bumps it to 2 (the write that breaks it, the finding's line), backward expects 1 and
    finds 2: events, versions and links as drawn."""
    monkeypatch.chdir(ROOT)
    html = html_of(capsys, "examples/resnet_block_inplace.py")
    [svg] = svgs(html)
    evs = events(svg)
    assert [e["kind"] for e in evs] == ["created", "write", "save", "write", "backward"]
    assert versions_in_order(evs) == [0, 0, 1, 1, 1, 2, 1, 2]  # v0; 0->1; saves 1; 1->2; expects 1, finds 2
    breaking = [e for e in evs if "breaks" in e["class"]]
    assert len(breaking) == 1 and breaking[0]["line"] == "28" and "primary" in breaking[0]["class"]
    assert evs[-1]["outcome"] == "raises" and evs[-1]["line"] == "35"
    facts = page_facts(html)
    for e in evs:  # every event links to its source line in the page
        assert e["href"].startswith("#") and e["href"][1:] in facts.ids and e["href"].endswith(f"-L{e['line']}")
    # the lane is the storage, named; the dashed arc says what the backward expects
    assert "expects v1" in html and svg.get("data-code") == "GW201"


def test_freed_graph_and_data_write_stories(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    html = html_of(capsys, "examples/rnn_hidden_not_detached.py", "examples/data_write_silent.py",
                   "examples/gan_step_order.py")
    by_code = {}
    for svg in svgs(html):
        by_code.setdefault(svg.get("data-code"), []).append(svg)
    freed = events(by_code["GW402"][0])
    assert [e["kind"] for e in freed] == ["save", "freed", "reuse", "backward"]  # the freed graph in between
    assert freed[-1]["outcome"] == "raises"
    data = by_code["GW601"][0]
    lanes = [g.get("data-lane") for g in data.iter("{http://www.w3.org/2000/svg}g") if g.get("data-lane")]
    assert lanes == ["saved", "alias"]  # the saved tensor, and the .data alias (same memory, own counter)
    kinds = [e["kind"] for e in events(data)]
    assert kinds == ["save", "data_write", "backward"]
    backward = events(data)[-1]
    assert backward["expects"] == backward["finds"] == "0" and backward["outcome"] == "silent"
    step = events(by_code["GW501"][0])
    assert [e["kind"] for e in step] == ["created", "save", "step", "backward"]  # the step in between
    assert versions_in_order(step) == [0, 0, 0, 1, 0, 1]


def test_no_findings_is_a_page_too(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("import torch\nx = torch.ones(2)\n")
    html = html_of(capsys, "ok.py")
    assert svgs(html) == [] and "No findings" in html and self_contained_problems(html) == []


def test_notebook_positions_and_output_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# title"},
                    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.sigmoid()\n"},
                    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": "y += 1\ny.sum().backward()\n"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    out = tmp_path / "report" / "timelines.html"
    assert cli.main(["check", "--output-format", "html", "--no-cache", "-o", str(out), "nb.ipynb"]) == 1
    html = out.read_text(encoding="utf-8")
    [svg] = svgs(html)
    assert [e["kind"] for e in events(svg)] == ["created", "save", "write", "backward"]
    assert "cell 3, line 1" in html and "cell 2, line 3" in html  # ruff's cell numbers, as the text output


def test_render_escapes_what_it_draws():
    """Names and code are text, never markup: a hostile line cannot inject into the page."""
    d = next(iter(diagnose("import torch\nx = torch.randn(2, requires_grad=True)\ny = x.exp()  # </svg><script>\n"
                           "y += 1\ny.sum().backward()\n", "<b>.py", default_settings(ROOT))))
    html = render_page([scene_of(d)], Sources(lines=lambda name: ["import torch", "x = ...",
                                                                  "y = x.exp()  # </svg><script>", "y += 1",
                                                                  "y.sum().backward()"]), title="t")
    assert "<script>" not in html and "&lt;/svg&gt;&lt;script&gt;" in html and "&lt;b&gt;.py" in html
    assert len(svgs(html)) == 1



def test_every_kind_of_runtime_finding_has_a_picture():
    """What the debug run reports (gradwarden.runtime.findings), kind by kind: drawn from its
    sites and evidence, its own site marked once, what the run saw marked seen."""
    from gradwarden.picture.from_run import scene_of_finding
    from gradwarden.runtime.findings import RUNTIME_ONLY, Finding, RelatedSite
    from gradwarden.runtime.findings import Site as RSite

    f = "/w/train.py"
    cases = [
        Finding("GW201", "version-counter", "m", RUNTIME_ONLY, write_site=RSite(f, 9), save_site=RSite(f, 8),
                backward_site=RSite(f, 12), filename=f, row=9,
                evidence={"versions": {"saved": 1, "current": 2, "write_from": 1, "write_to": 2}, "write_op": "Tensor.add_",
                          "save_op": "ReluBackward0", "tensor": {"shape": [2, 3], "dtype": "float32"}}),
        Finding("GW502", "fused-step", "m", RUNTIME_ONLY, severity="warning", write_site=RSite(f, 20),
                save_site=RSite(f, 15), backward_site=RSite(f, 22), filename=f, row=20,
                evidence={"versions": {"saved": 0, "current": 0}}),
        Finding("GW601", "data-write", "m", RUNTIME_ONLY, severity="warning", write_site=RSite(f, 9),
                save_site=RSite(f, 8), backward_site=RSite(f, 12), filename=f, row=9),
        Finding("GW402", "freed-graph", "m", RUNTIME_ONLY, save_site=RSite(f, 5), freed_site=RSite(f, 12),
                backward_site=RSite(f, 12), filename=f, row=7,
                related=(RelatedSite("reuse", RSite(f, 7), "backward #2 reuses here"),
                         RelatedSite("created", RSite(f, 4), "made here"),
                         RelatedSite("first-use", RSite(f, 5), "taken in here"))),
        Finding("GW101", "leaf-inplace", "m", RUNTIME_ONLY, write_site=RSite(f, 3), filename=f, row=3),
        Finding("GW307", "custom-function-contract", "m", RUNTIME_ONLY, backward_site=RSite(f, 30), filename=f, row=30),
        Finding("GW702", "non-scalar-backward", "m", RUNTIME_ONLY, filename=None, row=None),
    ]
    for finding in cases:
        scene = scene_of_finding(finding)
        assert scene.marks or finding.filename is None, finding.code
        if finding.filename is not None:
            assert sum(m.primary for m in scene.marks) == 1, (finding.code, scene.marks)
            assert all(m.seen for m in scene.marks)
        html = render_page([scene], Sources(lines=lambda name: None), title="t")
        assert self_contained_problems(html) == [] and "(source not available)" in html or finding.filename is None
    vc = scene_of_finding(cases[0])
    assert [m.kind for m in vc.marks] == ["save", "write", "backward"] and vc.versions() == [1, 1, 2, 1, 2]
    freed = scene_of_finding(cases[3])
    assert [m.kind for m in freed.marks] == ["created", "save", "use", "freed", "reuse", "backward"]
