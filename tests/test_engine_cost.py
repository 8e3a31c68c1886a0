"""Work the engine shares or skips (issue 13), as counts and results, never timings:

- a project module that several scripts import is parsed once per process, and parsed again
  when its bytes change (the finding that depends on it follows the edit);
- the followed modules' statements are registered without walking their expressions;
- the no-grad call-site walk is skipped in a module that names no no-grad region, and gives
  the same answer as before where it runs.

Times are measured by ``benchmarks/lint_timm.py`` and ``benchmarks/bench_bounded.py``.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import List, Tuple

import pytest

from gradwarden.engine.front import imports
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.front.callsites import CallSites
from project_import import TRAIN

MODELS = """
    import torch.nn as nn
    class D(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)
        def forward(self, x):
            return self.fc(x)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    for name in ("train_a.py", "train_b.py"):
        (tmp_path / name).write_text(TRAIN)
    return tmp_path


@pytest.fixture
def parses(monkeypatch) -> List[str]:
    """The files ast.parse is asked to parse, in order."""
    seen: List[str] = []
    real = ast.parse

    def counting(source, filename="<unknown>", *args, **kwargs):
        seen.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    monkeypatch.setattr(imports, "_PARSED", type(imports._PARSED)())
    monkeypatch.setattr(imports, "_parsed_bytes", 0)
    return seen


def findings(path: Path) -> List[Tuple[int, str]]:
    return [(d.row, d.code) for d in analyze_source(path.read_bytes(), str(path))]


def test_a_module_imported_by_two_scripts_is_parsed_once(project, parses):
    assert findings(project / "train_a.py") == [(9, "GW501")]
    assert findings(project / "train_b.py") == [(9, "GW501")]
    models = str((project / "models.py").resolve())
    assert parses.count(models) == 1
    assert parses.count(str(project / "train_a.py")) == 1 and parses.count(str(project / "train_b.py")) == 1


def test_an_edited_module_is_parsed_again_and_its_new_text_counts(project, parses):
    assert findings(project / "train_a.py") == [(9, "GW501")]
    # D stops being an nn.Module with parameters: `d.parameters()` is unknown, so is the step
    (project / "models.py").write_text("class D:\n    pass\n")
    models = str((project / "models.py").resolve())
    assert findings(project / "train_a.py") == []
    assert parses.count(models) == 2
    (project / "models.py").write_text(textwrap.dedent(MODELS))  # back: the first parse is reused
    assert findings(project / "train_a.py") == [(9, "GW501")]
    assert parses.count(models) == 2


def test_the_parse_cache_holds_at_most_its_byte_bound(project, parses, monkeypatch):
    monkeypatch.setattr(imports, "MAX_PARSED_BYTES", 10)  # smaller than models.py: never kept
    findings(project / "train_a.py")
    findings(project / "train_b.py")
    assert len(imports._PARSED) == 0 and imports._parsed_bytes == 0
    assert parses.count(str((project / "models.py").resolve())) == 2


def test_statements_of_a_followed_module_are_every_statement_and_nothing_else():
    src = textwrap.dedent("""
        import torch
        def f(x):
            if x:
                for i in range(3):
                    x = x + i
                else:
                    pass
            try:
                y = lambda: 1
            except ValueError:
                raise
            finally:
                del x
            match x:
                case 1:
                    return 2
        class C:
            a = 1
            def g(self):
                while True:
                    with open("f") as fh:
                        break
    """)
    parsed = imports.ParsedModule(src, ast.parse(src))
    expected = sorted(id(n) for n in ast.walk(parsed.tree) if isinstance(n, ast.stmt))
    assert sorted(map(id, parsed.statements)) == expected
    assert len(expected) == 18


GRAD_MODES = """
    import torch
    def copy_weights(dst, src):
        dst.data.copy_(src.data)
    def helper(x):
        return x * 2
    @torch.no_grad()
    def update(a, b):
        copy_weights(a, b)
    def train(a, b):
        with torch.no_grad():
            copy_weights(a, b)
        helper(a)
    def other(a):
        helper(a)
"""


def test_call_sites_answer_the_same_with_the_text_and_skip_the_walk_without_no_grad():
    src = textwrap.dedent(GRAD_MODES)
    tree = ast.parse(src)
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    walked, with_text = CallSites(tree), CallSites(tree, src)
    assert with_text.calls == walked.calls and walked.calls  # the walk ran: "no_grad" is named
    assert walked.grad_mode_of(defs["copy_weights"]) is False  # only ever called under no_grad
    assert walked.grad_mode_of(defs["helper"]) is None
    plain = src.replace("@torch.no_grad()\n", "").replace("with torch.no_grad():", "if True:")
    plain_tree = ast.parse(plain)
    skipped = CallSites(plain_tree, plain)
    assert skipped.calls == {}  # no no-grad region named: nothing to find
    full = CallSites(plain_tree)
    for fn in plain_tree.body:
        if isinstance(fn, ast.FunctionDef):
            assert skipped.grad_mode_of(fn) is full.grad_mode_of(fn) is None


NESTED_GRAD_MODES = """
    import torch
    class Holder:
        def fill(self, t):
            t.zero_()
        @torch.no_grad()
        def reset(self, t):
            self.fill(t)
            def inner(u):
                grad_on(u)  # a def of its own: grad on again
            @torch.no_grad()
            def inner_off(u):
                off_in_inner(u)
            helper = lambda u: from_lambda(u)
    def train(h, t, m):
        for _ in range(3):
            try:
                pass
            except ValueError:
                with torch.inference_mode():
                    in_handler(t)
            else:
                with torch.set_grad_enabled(False), open("f") as fh:
                    in_else(fh)
        with torch.set_grad_enabled(True):
            grad_on(t)
        match m:
            case 1:
                with torch.no_grad():
                    class Local:
                        x = in_class_body(t)
        h.fill(t)
"""


def test_call_sites_no_grad_names_from_the_regions_are_those_of_the_whole_walk():
    """grad_mode_of walks only the no-grad regions unless a function's name is called in one:
    the names found there are exactly the ones the whole walk records under no_grad, and the
    answers are the same either way."""
    src = textwrap.dedent(NESTED_GRAD_MODES)
    tree = ast.parse(src)
    lazy = CallSites(tree, src)
    names = lazy.names_under_no_grad()
    assert lazy._calls is None  # no whole walk for that
    full = CallSites(tree)
    recorded = {n for n, sites in full.calls.items() if any(ng for _, ng in sites)}
    assert names == recorded
    assert {"fill", "off_in_inner", "from_lambda", "in_handler", "in_else", "in_class_body"} <= names
    assert "grad_on" not in names and "zero_" not in names
    for fn in ast.walk(ast.parse(src)):
        if isinstance(fn, ast.FunctionDef):
            assert CallSites(tree, src).grad_mode_of(fn) is full.grad_mode_of(fn)
    unrelated = CallSites(tree, src)
    assert unrelated.grad_mode_of(ast.parse("def train(): pass").body[0]) is None
    assert unrelated._calls is None  # `train` is never called under no_grad: no whole walk
    fill = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "fill")
    assert full.grad_mode_of(fill) is None  # called under no_grad and with grad on (h.fill)


def test_interest_propagates_along_call_chains_of_any_length_and_only_there():
    """Triggers' fixpoint over calls (a worklist now): every caller up a chain of 60 plain
    functions ending in an in-place write is interesting, through `self.` calls too; a function
    calling none of them is not."""
    from gradwarden.engine.front.source import SourceText
    from gradwarden.engine.front.triggers import Triggers

    lines = ["import torch"]
    n = 60
    for i in range(n - 1):
        lines += [f"def f{i}(x):", f"    return f{i + 1}(x)"]
    lines += [f"def f{n - 1}(x):", "    x.add_(1)", "    return x"]
    lines += ["def unrelated(x):", "    return x * 2"]
    lines += ["class M:", "    def a(self, x):", "        return self.b(x)", "    def b(self, x):", "        return f0(x)",
              "    def c(self, x):", "        return unrelated(x)"]
    src = "\n".join(lines) + "\n"
    tree = ast.parse(src)
    interesting = Triggers(tree, SourceText(src)).interesting
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert all(id(funcs[f"f{i}"]) in interesting for i in range(n))
    assert id(funcs["a"]) in interesting and id(funcs["b"]) in interesting
    assert id(funcs["unrelated"]) not in interesting and id(funcs["c"]) not in interesting
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert id(cls) in interesting


def test_files_are_parsed_with_the_collector_held_back_and_its_thresholds_restored(monkeypatch):
    """A parse allocates an object per node; under the default thresholds the collector
    would traverse everything the process holds several times per file."""
    import gc

    seen = []
    real = ast.parse

    def spying(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    before = gc.get_threshold()
    monkeypatch.setattr(ast, "parse", spying)
    analyze_source("import torch\nx = torch.ones(2, requires_grad=True)\n", "t.py")
    assert seen and seen[0][0] > before[0]
    assert gc.get_threshold() == before


def test_the_collector_is_off_during_an_analysis_and_a_files_garbage_cycles_are_freed_after_it(monkeypatch):
    """Inside a run over many files (one window of fewer collections, as the runner's), the
    automatic collector is off while a file is analysed and the youngest generation is
    collected after it: a garbage cycle the analysis made is freed there, not held to the end
    of the run; the collector's state is restored when the window closes."""
    import gc
    import weakref

    from gradwarden.engine.entry import fewer_collections

    class Cycle:
        pass

    enabled, cycles = [], []
    real = ast.parse

    def spying(*args, **kwargs):
        enabled.append(gc.isenabled())
        node = Cycle()
        node.me = node  # garbage once the parse returns: only a collection frees it
        cycles.append(weakref.ref(node))
        return real(*args, **kwargs)

    was_enabled, before = gc.isenabled(), gc.get_threshold()
    monkeypatch.setattr(ast, "parse", spying)
    with fewer_collections():
        analyze_source("import torch\nx = torch.ones(2, requires_grad=True)\nx.add_(1)\n", "t.py")
        assert enabled and not any(enabled)
        assert cycles and all(ref() is None for ref in cycles)
        assert not gc.isenabled()
    assert gc.isenabled() == was_enabled and gc.get_threshold() == before


def test_interest_through_a_name_called_by_many_functions_is_the_same_fixpoint():
    """Reverse edges are kept per called name: 300 functions calling `shared(` become
    interesting together when `shared` has a trigger, as with the rescanning fixpoint; a
    function that calls nothing interesting does not."""
    from gradwarden.engine.front.source import SourceText
    from gradwarden.engine.front.triggers import Triggers

    lines = ["import torch", "def shared(x):", "    x.add_(1)", "    return x"]
    for k in range(300):
        lines += [f"def user{k}(x):", "    return shared(x) * 2"]
    lines += ["def quiet(x):", "    return x"]
    src = "\n".join(lines) + "\n"
    tree = ast.parse(src)
    interesting = Triggers(tree, SourceText(src)).interesting
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert len(funcs) == 302 and all(id(f) in interesting for f in funcs[:301])
    assert id(funcs[301]) not in interesting


def test_a_def_line_is_not_a_call_and_a_class_built_is():
    """`def forward(` names every `forward` of the file, but calls none of them: a trigger in one
    forward does not make the others interesting. Building a local class does call it: a
    function that builds (and may call) a class with an interesting method is interesting,
    and so is a method calling its base's method through super()."""
    from gradwarden.engine.front.source import SourceText
    from gradwarden.engine.front.triggers import Triggers

    src = textwrap.dedent('''
        import torch
        class Inplace(torch.nn.Module):
            def forward(self, x):
                x.mul_(2)
                return x
        class Quiet(torch.nn.Module):
            def forward(self, x):
                return x * 2
        class Child(Inplace):
            def forward(self, x):
                return super().forward(x) + 1
        def build(x):
            return Inplace()(x)
        def build_quiet(x):
            return Quiet()(x)
    ''')
    tree = ast.parse(src)
    interesting = Triggers(tree, SourceText(src)).interesting
    defs = {(c.name if isinstance(c, ast.FunctionDef) else f"{c.name}.{m.name}"): (m if not isinstance(c, ast.FunctionDef) else c)
            for c in tree.body if isinstance(c, (ast.ClassDef, ast.FunctionDef))
            for m in (c.body if isinstance(c, ast.ClassDef) else [c]) if isinstance(m, ast.FunctionDef)}
    assert {name for name, node in defs.items() if id(node) in interesting} == {
        "Inplace.forward", "Child.forward", "build"}


def test_a_docstring_does_not_make_a_library_module_a_script():
    """A module's docstring often shows usage (``DropPath(x)``, ``inplace=True``): running it
    does nothing, so it does not put the module in script mode (running all its top-level code
    and following its imports); a real top-level call of the same function does."""
    from gradwarden.engine.front.source import SourceText
    from gradwarden.engine.front.triggers import Triggers

    library = textwrap.dedent('''
        """Drop paths. Use as `y = DropPath(0.1)(x)`, or `act = nn.ReLU(inplace=True)`."""
        import torch
        class DropPath(torch.nn.Module):
            def forward(self, x):
                x.mul_(2)
                return x
    ''')
    script = library + "y = DropPath()(torch.ones(2))\n"
    for text, expected in ((library, False), (script, True)):
        tree = ast.parse(text)
        assert Triggers(tree, SourceText(text)).script_mode(tree) is expected


def test_join_takes_every_key_a_path_added_after_the_fork_they_share():
    """join_states looks for what the kept path lacks only past the latest fork both paths
    descend from (the four dicts only gain keys, and copies keep their order): the joined
    state still has every tensor, object, list and dict of every path, including paths joined
    before, paths forked at different depths, and paths with no fork in common."""
    from gradwarden.engine.state.model import State, join_states

    def add(st, name, key):
        st.own(name)[key] = (name, key)

    root = State()
    for k in range(1, 6):
        for name in ("t", "objs", "lists", "dicts"):
            add(root, name, k)
    a = root.fork()
    add(a, "t", 100)
    add(a, "lists", 101)
    b = a.fork()  # b shares a later fork with a than with root
    add(b, "objs", 200)
    add(b, "t", 201)
    c = root.fork()
    add(c, "dicts", 300)
    add(root, "t", 400)  # the parent goes on after its forks
    a.seq, b.seq, c.seq, root.seq = 4, 1, 2, 3  # the kept path is the one that did the most (a)
    stranger = State()  # shares no fork with anyone
    add(stranger, "lists", 500)
    states = [a, b, c, root, stranger]
    want = {name: set().union(*(getattr(s, name).keys() for s in states)) for name in ("t", "objs", "lists", "dicts")}
    joined = join_states(states)
    for name, keys in want.items():
        assert set(getattr(joined, name)) == keys, name
    again = join_states([joined.fork(), b])  # a join's result joined again: nothing lost, nothing new
    assert {name: set(getattr(again, name)) for name in want} == want


def test_call_sites_walk_only_statements_naming_no_grad_and_find_decorated_regions():
    """With the text, the no-grad regions are looked for only in the top-level statements whose
    rows (a decorator's included) name a no-grad word; the names are those of the whole walk."""
    src = textwrap.dedent("""\
        import torch

        def plain(x):
            return helper(x)

        @torch.no_grad()
        def decorated(model):
            copy_weights(model)

        class Evaluator:
            def run(self, x):
                with torch.inference_mode():
                    return score(x)

        def later():
            torch.set_grad_enabled(False)
            tail()
    """)
    tree = ast.parse(src)
    lazy = CallSites(tree, src)
    walked = []
    import gradwarden.engine.front.callsites as callsites

    real = callsites._no_grad_regions

    def spy(body):
        walked.extend(getattr(s, "name", type(s).__name__) for s in body)
        return real(body)

    callsites._no_grad_regions = spy
    try:
        names = lazy.names_under_no_grad()
    finally:
        callsites._no_grad_regions = real
    assert walked == ["decorated", "Evaluator", "later"]  # not `import torch`, not `plain`
    assert names == CallSites(tree).names_under_no_grad()
    assert {"copy_weights", "score"} <= names and "helper" not in names


def test_an_analysis_run_is_freed_by_reference_counts_not_left_as_a_garbage_cycle(monkeypatch):
    """The interpreter holds its roles and the tables they keep (the flow role's reach, modes,
    hooks, zeros), each holding it back: ``Interpreter.release`` cuts those links when the run
    ends, so the run (tree, states, records) is freed where it ends, with the collector off,
    instead of waiting as one large cycle for a collection that must traverse it."""
    import gc
    import weakref

    from gradwarden.engine.interp.interpreter import Interpreter

    made = []
    real_init = Interpreter.__init__

    def init(self, *args, **kwargs):
        made.append(weakref.ref(self))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Interpreter, "__init__", init)
    src = ("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n"
           "        return self.fc(x).relu()\n\n\ndef train(model, opt, loader):\n    for x in loader:\n"
           "        loss = model(x).sum()\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
           "        x.add_(1)\n")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        analyze_source(src, "t.py")
        assert made and all(ref() is None for ref in made)
    finally:
        if was_enabled:
            gc.enable()
