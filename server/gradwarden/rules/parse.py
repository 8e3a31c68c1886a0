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


class AnalysisStopped(Rule):
    """The analysis of this definition stopped early: it needed more work than one
    definition is allowed.

    gradwarden follows every path through a function (each branch, two iterations of each
    loop, the bodies of the functions it calls) and keeps the work polynomial in the nesting
    depth. A definition that needs more than its allotment of statement visits is analysed
    once more, coarsely, within a third of it: the paths of each block joined into one at
    every statement, a known sequence looped over as one of unknown length (a training loop
    whose branches and walks over a model's modules multiply through a library's calls
    usually fits then, and a hazard on every path is still found). Only when that runs out
    too is the definition analysed up to that point, and this note says so. Hazards that the
    rest of it would have shown are not reported; every other definition of the file is
    analysed as usual. Calls that fan out at every level (each function calling the next
    several times) are the usual cause: split the definition, or check the callees on their
    own. The note
    names the line where the analysis stopped (a line of another module of the project is
    named by the call in this file that reached it) and what had grown there: how many paths
    ran together, how many loops enclosed it, and the calls inlined on the way to it.

    The same note, on line 1, says when a whole file was analysed in parts ("analysed in
    parts: ..."): a file of more than 1 M characters (a generated module; no hand-written one
    comes near) is never held as one syntax tree, which alone would cost about 150 bytes of
    memory per character. Its top-level statements are analysed a part of about 256 k
    characters at a time, each part with the imports and the definitions and assignments
    whose names it uses (at their own rows: line numbers are the file's). A hazard inside a
    part, or reached through the names a part uses, is reported as for a smaller file; one
    whose steps lie in parts that share no names (module-level code in one part changing an
    object that code in another part uses) may be missed. A syntax error is reported as for
    any file.
    """

    event = "analysis_stopped"
    NO_FIX = (0,)  # how to split a definition is the user's call
    code = "GW002"
    name = "analysis-stopped"
    family = "-"
    severity = Severity.INFORMATION
    summary = "The analysis of a definition stopped early (too much work); later hazards in it are not reported."
    message = ("analysis stopped early{where}: {what} needs more than {limit} statement visits (branches x loop "
               "iterations x inlined calls){growth}; hazards in it past that point are not reported")
    INVALID = (
        """
        import torch


        def layer0(x):
            return x.relu()


        def layer1(x):
            return layer0(x) + layer0(x) + layer0(x) + layer0(x) + layer0(x)


        def layer2(x):
            return layer1(x) + layer1(x) + layer1(x) + layer1(x) + layer1(x)


        def layer3(x):
            return layer2(x) + layer2(x) + layer2(x) + layer2(x) + layer2(x)


        def layer4(x):
            return layer3(x) + layer3(x) + layer3(x) + layer3(x) + layer3(x)


        def layer5(x):
            return layer4(x) + layer4(x) + layer4(x) + layer4(x) + layer4(x)


        def layer6(x):
            return layer5(x) + layer5(x) + layer5(x) + layer5(x) + layer5(x)


        def layer7(x):  # <-
            return layer6(x) + layer6(x) + layer6(x) + layer6(x) + layer6(x)


        x = torch.randn(3, requires_grad=True)
        layer7(x).sum().backward()
        """,
    )
