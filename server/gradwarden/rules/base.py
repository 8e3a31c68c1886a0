"""The shape of a rule: one hazard, its documentation and its examples in one small class.

A rule never walks the AST. The interpreter emits *events* (a write hit a saved tensor, a
backward reached a freed node, ...) and the rule that owns the event's kind turns it into a
Diagnostic. VALID/INVALID snippets are the rule's tests (tests/test_rule_examples.py runs
them) and its documentation (`gradwarden rule CODE`, docs/rules.md).
"""
from __future__ import annotations

import inspect
from typing import ClassVar, List, Tuple

from gradwarden.engine.diagnostic import Severity


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""  # kebab-case short name
    family: ClassVar[str] = ""  # A..F as in the case corpus; H gradient flow
    severity: ClassVar[Severity] = Severity.ERROR
    summary: ClassVar[str] = ""  # one line
    message: ClassVar[str] = "{detail}"  # format template over the event's facts
    event: ClassVar[str] = ""  # the interpreter event kind this rule reports
    # The exception torch raises for an error-severity rule (RuntimeError for autograd's own
    # checks; optimizers raise ValueError): what running an INVALID example must end with.
    raises: ClassVar[str] = "RuntimeError"
    # Snippets: each INVALID one must produce this rule's code on the line marked `# <-`
    # (or anywhere, when none is marked); each VALID one must produce no error/warning at all.
    VALID: ClassVar[Tuple[str, ...]] = ()
    INVALID: ClassVar[Tuple[str, ...]] = ()
    # Indices of INVALID examples no automatic fix can repair (the right change depends on
    # intent the code does not state: which parameters should train, what a loss on argmax
    # meant); tests/test_fix_cases.py skips them.
    NO_FIX: ClassVar[Tuple[int, ...]] = ()
    # True while only the runtime bridge (``gradwarden debug``) proves this hazard: the static
    # analysis has no event for it yet, so the rule has no INVALID example to check.
    runtime_only: ClassVar[bool] = False

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def render(cls) -> str:
        """Markdown documentation of the rule (used by `gradwarden rule` and docs/rules.md)."""
        import textwrap

        # The error families (errgen) only document: `check` imports the rules, not them.
        from gradwarden.errgen.families import families_for

        out: List[str] = [f"## {cls.code} `{cls.name}`", "", f"*{cls.summary}*  ",
                          f"Default severity: **{cls.severity.label}** · family {cls.family}", "",
                          cls.doc(), ""]
        said = families_for(cls.code)
        if said:
            out += ["PyTorch's message: " + "; ".join(f"[{f.title}](errors.md#{f.key})" for f in said), ""]
        if cls.runtime_only:
            out += ["Found by `gradwarden debug` (the run proves it; see runtime.md); `gradwarden check` "
                    "does not flag it yet.", ""]
        if cls.INVALID:
            out += ["### Flagged", ""]
            for snip in cls.INVALID:
                out += ["```python", textwrap.dedent(snip).strip("\n"), "```", ""]
        if cls.VALID:
            out += ["### Not flagged", ""]
            for snip in cls.VALID:
                out += ["```python", textwrap.dedent(snip).strip("\n"), "```", ""]
        return "\n".join(out).rstrip() + "\n"
