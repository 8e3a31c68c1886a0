"""Code actions: every quick fix of the seed cases applied (resolved lazily where the client
can) and the result re-analysed; the preferred fix marked; ``# noqa`` for one line;
``source.fixAll.gradwarden``; edits against the version they were computed for."""
from __future__ import annotations

import textwrap
from typing import Any, List

import pytest
from lsprotocol import types as lsp

from lsp_session import codes, seed_cases

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIGMOID = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
""")


def is_noqa(a: Any) -> bool:
    return "Disable" in a.title and "for this line" in a.title


def quickfixes(actions: List[Any]) -> List[lsp.CodeAction]:
    return [a for a in actions if isinstance(a, lsp.CodeAction) and a.kind == lsp.CodeActionKind.QuickFix]


def engine(text: str):
    from gradwarden.runner import diagnose

    return diagnose(text, "x.py")


async def test_each_quick_fix_applied_and_reanalysed(session):
    s = session
    applied = 0
    for case in seed_cases():
        text = case.read_text()
        want = engine(text)
        if not want:
            continue
        probe = s.open(s.unique(case.stem), text)
        diags = await s.diagnostics(probe, lambda ds, n=len(want): len(ds) == n)
        await s.fixes_ready(probe)  # the fixes the fixer can realise here (what a user sees)
        titles = []
        for d in diags:
            actions = quickfixes(await s.code_actions(probe, d.range, diagnostics=[d]))
            titles += [(d, a.title) for a in actions if not is_noqa(a) and a.diagnostics and
                       (a.diagnostics[0].range, a.diagnostics[0].code) == (d.range, d.code)]
        s.close(probe)
        for k, (d, title) in enumerate(titles):
            doc = s.open(s.unique(case.stem), text)
            fresh = await s.diagnostics(doc, lambda ds, n=len(want): len(ds) == n)
            if k % 2:
                await s.fixes_ready(doc)  # half the fixes applied from prepared edits, half lazily
            target = next(x for x in fresh if (x.range, x.code) == (d.range, d.code))
            offered = await s.code_actions(doc, target.range, diagnostics=[target])
            action = next((a for a in quickfixes(offered) if a.title == title), None)
            assert action is not None, (title, [(type(a).__name__, a.title) for a in offered])
            assert action.title.startswith(f"gradwarden ({d.code}): "), action.title
            before = doc.version
            await s.apply_action(action)
            assert doc.version > before, f"{case.name}: {title}: nothing applied"
            after = await s.diagnostics(doc)
            assert (d.code, d.range.start.line + 1) not in codes(after), \
                f"{case.name}: {title} left {codes(after)}\n{doc.text}"
            origin = next(w for w in want if w.code == d.code)
            fix = next((f for f in origin.fixes if title.endswith(f.title)), None)
            if fix is not None and fix.safe:
                assert not after, f"{case.name}: safe fix {title!r} left {codes(after)}\n{doc.text}"
            applied += 1
            s.close(doc)
    assert applied >= 10, f"only {applied} quick fixes applied"


async def test_preferred_fix_and_titles(session):
    s = session
    doc = s.open(s.unique("preferred"), SIGMOID)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    actions = quickfixes(await s.code_actions(doc, d.range, diagnostics=[d]))
    titles = [a.title for a in actions]
    assert all(t.startswith("gradwarden (GW201): ") for t in titles), titles
    assert "gradwarden (GW201): Disable GW201 for this line" in titles
    preferred = [a for a in actions if a.is_preferred]
    from pygls.capabilities import get_capability

    if get_capability(s.caps, "text_document.code_action.is_preferred_support", False):
        assert len(preferred) == 1 and "out of place" in preferred[0].title, titles
    else:
        assert not preferred
    assert all(a.diagnostics and a.diagnostics[0].code == "GW201" for a in actions)
    s.close(doc)


async def test_noqa_action(any_session):
    s = any_session
    doc = s.open(s.unique("noqa"), SIGMOID)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    [noqa] = [a for a in await s.code_actions(doc, d.range) if is_noqa(a)]
    await s.apply_action(noqa)
    assert doc.lines()[4] == "y += 1  # noqa: GW201"
    assert await s.diagnostics(doc, lambda ds: not ds) == []
    # An existing noqa list is extended, not duplicated.
    s.change(doc, SIGMOID.replace("y += 1", "y += 1  # noqa: GW303"))
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    [noqa] = [a for a in await s.code_actions(doc, d.range) if is_noqa(a)]
    await s.apply_action(noqa)
    assert doc.lines()[4] == "y += 1  # noqa: GW303, GW201"
    assert await s.diagnostics(doc, lambda ds: not ds) == []
    s.close(doc)


async def test_fix_all_source_action(any_session):
    s = any_session
    text = textwrap.dedent("""\
        import torch


        def first():
            x = torch.randn(3, requires_grad=True)
            y = torch.sigmoid(x)
            y += 1
            y.sum().backward()


        def second():
            w = torch.randn(3, requires_grad=True)
            z = torch.exp(w)
            z *= 2
            z.sum().backward()
    """)
    doc = s.open(s.unique("fixall"), text)
    diags = await s.diagnostics(doc, lambda ds: len(ds) == 2)
    for only in (["source.fixAll"], ["source.fixAll.gradwarden"], ["source"]):
        actions = await s.code_actions(doc, only=only)
        assert [a.kind for a in actions] == ["source.fixAll.gradwarden"], (only, actions)
    # Not offered for unrelated kinds.
    assert await s.code_actions(doc, only=["refactor"]) == []
    [fix_all] = await s.code_actions(doc, only=["source.fixAll"])
    assert fix_all.title.startswith("gradwarden: Fix all")
    await s.apply_action(fix_all)
    after = await s.diagnostics(doc, lambda ds: len(ds) < len(diags))
    assert after == [], f"{codes(after)}\n{doc.text}"
    s.close(doc)


async def test_fix_all_command(session):
    s = session
    doc = s.open(s.unique("fixallcmd"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    result = await s.command("gradwarden.fixAll", doc.uri)
    assert result["fixes"] == 1 and result["applied"], result
    assert await s.diagnostics(doc, lambda ds: not ds) == []
    s.close(doc)


async def test_cursor_anywhere_on_a_flagged_line(session):
    s = session
    text = SIGMOID.replace("y += 1", "if True:\n    y += 1")
    doc = s.open(s.unique("cursor"), text)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    assert d.range.start.character == 4
    cursor = s.range(doc, d.range.start.line, 0, d.range.start.line, 0)  # column 0, before the squiggle
    titles = [a.title for a in quickfixes(await s.code_actions(doc, cursor))]
    assert any("out of place" in t for t in titles), titles
    s.close(doc)


async def test_no_quick_fix_outside_flagged_ranges(session):
    s = session
    doc = s.open(s.unique("outside"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    actions = await s.code_actions(doc, s.range(doc, 0, 0, 0, 3))
    assert actions == []
    s.close(doc)


async def test_half_typed_code_offers_only_noqa(session):
    s = session
    doc = s.open(s.unique("broken_actions"), SIGMOID + "z = (\n")
    diags = await s.diagnostics(doc, lambda ds: any(d.code == "GW001" for d in ds))
    # Nothing analysed yet that parsed: only the parse error.
    assert codes(diags) == [("GW001", 7)] or ("GW001", 7) in codes(diags)
    s.change(doc, SIGMOID)
    await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 5)])
    s.change(doc, SIGMOID + "z = (\n")
    diags = await s.diagnostics(doc, lambda ds: ("GW201", 5) in codes(ds) and ("GW001", 7) in codes(ds))
    carried = next(d for d in diags if d.code == "GW201")
    actions = quickfixes(await s.code_actions(doc, carried.range))
    assert actions and all(is_noqa(a) for a in actions), [a.title for a in actions]
    # The syntax error itself: nothing to offer (a noqa comment cannot silence it).
    error = next(d for d in diags if d.code == "GW001")
    titles = [a.title for a in await s.code_actions(doc, error.range)]
    assert not any("GW001" in t for t in titles), titles
    s.close(doc)


async def test_edits_carry_the_version_they_were_computed_for(session):
    s = session
    from pygls.capabilities import get_capability

    doc = s.open(s.unique("versioned"), SIGMOID)
    s.change(doc, "# v2\n" + doc.text)
    s.change(doc, "# v3\n" + doc.text)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    lazy = [a for a in quickfixes(await s.code_actions(doc, d.range)) if not is_noqa(a)]
    await s.fixes_ready(doc)
    actions = [a for a in quickfixes(await s.code_actions(doc, d.range)) if not is_noqa(a)]
    assert actions and all(a.edit is not None for a in actions)
    # offered before the edits were prepared, the same fixes resolve (or apply) to the same edits
    assert [a.title for a in lazy] == [a.title for a in actions]
    if "edit" in (get_capability(s.caps, "text_document.code_action.resolve_support.properties", []) or []):
        assert [(await s.resolve(a)).edit for a in lazy] == [a.edit for a in actions]
    elif get_capability(s.caps, "workspace.apply_edit", False):
        # no resolve: an unprepared fix is offered at once with the command that computes it
        assert all(a.edit is not None or (a.command and a.command.command == "gradwarden.applyFix")
                   for a in lazy), lazy
        picked = next((a for a in lazy if a.edit is None), None)
        if picked is not None:
            twin = s.open(s.unique("versioned-twin"), doc.text)
            await s.diagnostics(twin, lambda ds: len(ds) == 1)
            prepared = next(a for a in actions if a.title == picked.title)
            await s.apply_action(picked)  # the server sends workspace/applyEdit for doc
            s.apply_edit(prepared.edit.__class__(changes={twin.uri: (prepared.edit.changes or {}).get(doc.uri) or
                                                          prepared.edit.document_changes[0].edits}))
            assert doc.text == twin.text
            s.close(twin)
            s.close(doc)
            return
    for a in actions:
        if get_capability(s.caps, "workspace.workspace_edit.document_changes", False):
            assert [c.text_document.version for c in a.edit.document_changes] == [3]
        else:
            assert a.edit.document_changes is None and list(a.edit.changes) == [doc.uri]
    # resolve of a complete action gives it back unchanged
    if "edit" in (get_capability(s.caps, "text_document.code_action.resolve_support.properties", []) or []):
        resolved = await s.client.code_action_resolve_async(actions[0])
        assert resolved.edit == actions[0].edit
    s.close(doc)


def _protect(path) -> Any:
    """Make ``path`` unwritable for the server's user: immutable (chattr +i) when running as root,
    which may write any mode; read-only otherwise. Returns the undo, or None when impossible."""
    import os
    import shutil
    import subprocess

    if os.geteuid() != 0:
        os.chmod(path, 0o444)
        return lambda: os.chmod(path, 0o644)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        return None
    return lambda: subprocess.run([chattr, "-i", str(path)], capture_output=True)


async def test_no_edit_is_offered_for_a_file_the_user_cannot_write(session):
    """Quick fixes, fix-all and the fix commands never send an edit of a file on disk that the
    user may not write: disabled actions with the reason (where the client shows them), and one
    clear error from the commands."""
    s = session
    doc = s.open(s.unique("readonly"), SIGMOID)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    undo = _protect(s.path(doc.uri.rsplit("/", 1)[-1]))
    if undo is None:
        s.close(doc)
        pytest.skip("the file cannot be made unwritable here (root without a working chattr +i)")
    try:
        actions = await s.code_actions(doc, d.range, diagnostics=[d])
        fixes = quickfixes(actions)
        assert all(a.disabled is not None and "cannot be written" in a.disabled.reason and a.edit is None
                   and a.command is None for a in fixes), fixes
        assert not [a for a in actions if not isinstance(a, lsp.CodeAction)]  # no bare commands either
        assert await s.code_actions(doc, only=["source.fixAll"]) == []
        result = await s.command("gradwarden.fixAll", doc.uri)
        assert result["applied"] is False and "not writable" in result["reason"], result
        assert any(m.type == lsp.MessageType.Error and "cannot fix" in m.message
                   for m in s.client.messages[s._msg_index:])
    finally:
        undo()
        s.end_test(allow_errors=True)
        s.begin_test()
    s.close(doc)
