"""The interpreter assembled from the rooms: which object plays each of its roles.

The interpreter (engine/interp/) runs Python and, for anything torch, asks the objects it
holds: the torch domain (engine/domain/) says what a call does, the autograd graph and the
checks (engine/checks/) record nodes, saves and writes and emit the events that
``gradwarden.rules`` turns into diagnostics. Each role is one class; the gradient-flow analysis
plugs in as a layer over the roles it observes (``FlowTensors`` over ``Tensors`` ...). A caller
that needs other behaviour passes its own classes for some roles (the hover recorder in
engine/explain/, the analysis in parts in engine/incremental/parts.py).
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Dict, List, Optional

from gradwarden.engine.checks.flow import FlowFacts
from gradwarden.engine.checks.flowchecks import LossChecks
from gradwarden.engine.checks.flowlayers import (
    FlowBackwardPass, FlowExpressions, FlowGraph, FlowStatements, FlowStores, FlowWrites,
)
from gradwarden.engine.checks.flowtorch import (
    FlowBuiltins, FlowCustomFunctions, FlowModules, FlowOptimizers, FlowTensors, FlowTorchCalls,
)
from gradwarden.engine.checks.flowviews import ViewChecks
from gradwarden.engine.checks.training import TrainingChecks
from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.engine.front.source import SourceText
from gradwarden.engine.interp.calls import Calls
from gradwarden.engine.interp.interpreter import Interpreter
from gradwarden.engine.interp.projects import ProjectImports
from gradwarden.engine.interp.unreached import Unreached

Role = Callable[[Interpreter], Any]

# role (the interpreter's attribute) -> the class that plays it
ROLES: Dict[str, Role] = {
    # gradient flow's facts first: the roles that record or read them keep a reference to them
    "flow": FlowFacts,
    # the interpreter's Python semantics (engine/interp/), with the flow layers where they observe
    "stmts": FlowStatements,
    "stores": FlowStores,
    "ev": FlowExpressions,
    "calls": Calls,
    "unreached": Unreached,
    "projects": ProjectImports,
    # the torch domain (engine/domain/), observed by the flow layers (engine/checks/flowtorch.py)
    "torch": FlowTorchCalls,
    "tensors": FlowTensors,
    "modules": FlowModules,
    "optim": FlowOptimizers,
    "functions": FlowCustomFunctions,
    "builtins": FlowBuiltins,
    # the autograd graph and its checks (engine/checks/)
    "graph": FlowGraph,
    "writes": FlowWrites,
    "backward": FlowBackwardPass,
    # the checks of gradient flow
    "losses": LossChecks,
    "training": TrainingChecks,
    "viewchecks": ViewChecks,
}


def new_interpreter(tree: ast.Module, src: SourceText, filename: str, triggers: Any = None,
                    roles: Optional[Dict[str, Role]] = None) -> Interpreter:
    """An interpreter of ``tree`` with the default roles, ``roles`` replacing some of them."""
    return Interpreter(tree, src, filename, triggers, dict(ROLES, **roles) if roles else ROLES)


def analyze_module(tree: ast.Module, src: SourceText, filename: str) -> List[Diagnostic]:
    from gradwarden.rules.dispatch import events_to_diagnostics

    interp = new_interpreter(tree, src, filename)
    try:
        events = interp.run()
    except RecursionError:
        events = list(interp.events.values())
    return events_to_diagnostics(events, filename, src, followed_sources(interp))


def followed_sources(interp: Interpreter) -> Dict[str, SourceText]:
    """The text of each module of the project the analysis followed, by absolute path (the
    ``Span.file`` of a finding made there)."""
    resolver = interp.resolver
    if resolver is None:
        return {}
    return {str(fm.path): fm.src for fm in resolver.cache.values() if fm is not None}
