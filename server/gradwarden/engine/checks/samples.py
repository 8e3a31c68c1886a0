"""Samples drawn with ``.sample()`` where ``.rsample()`` was needed (GW722: a part of the loss cut from the graph).

``Distribution.sample()`` runs under ``no_grad``: its value is a constant to autograd. A
reparameterisable distribution (``Normal``, ``LogNormal``, ``Laplace``, ``Uniform``, ``Beta``,
``Gamma``, ``RelaxedOneHotCategorical`` ...) built from values that require grad offers
``.rsample()``, whose value is a differentiable function of those values. When a backwarded loss
uses a ``.sample()`` through a differentiable op (a decoder, a critic, a product with weights), the
gradient that should reach the distribution's parameters through the sample is silently zero; the
loss may still train them through other terms (a KL), so nothing raises and nothing stays at
``None``.

A sample scored by ``log_prob``/``cdf`` of a distribution (REINFORCE, PPO, an entropy bonus) is
the score-function estimator: there ``sample()`` is meant, and the check stays silent on every
use of it. Distributions without ``rsample`` (``Categorical``, ``Bernoulli``, ``Poisson`` ...) are
not reported: a discrete sample has no reparameterised gradient to lose.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Sequence, Set, Tuple

from gradwarden.engine.checks.flowfacts import Cut
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ObjV, SeqV, State, TensorV, Value

# torch.distributions classes with has_rsample = True (torch 2.13)
REPARAMETERIZED = frozenset({
    "Normal", "MultivariateNormal", "LowRankMultivariateNormal", "LogNormal", "Laplace", "Cauchy", "Gumbel",
    "Uniform", "Exponential", "Gamma", "Beta", "Dirichlet", "StudentT", "HalfNormal", "HalfCauchy", "Chi2",
    "FisherSnedecor", "Kumaraswamy", "Weibull", "Pareto", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "ContinuousBernoulli", "LogisticNormal", "InverseGamma", "GeneralizedPareto", "Wishart",
})
# methods that score a value under a distribution: a sample passed to one is the score-function estimator
SCORING = frozenset({"log_prob", "cdf", "icdf", "prob"})
WRAPPERS = frozenset({"Independent", "TransformedDistribution", "ExpRelaxedCategorical"})


class NonReparameterizedSamples:
    """Held by the ``flow`` role as ``flow.samples``."""

    def __init__(self, flow: Any) -> None:
        self.flow = flow
        self.it = flow.it
        self.bases: Dict[int, int] = {}  # a wrapping distribution's oid -> the oid of the one it wraps
        self.cuts: Dict[Cut, Tuple[str, Tuple[str, ...]]] = {}  # sample cut -> (distribution, parameter names)
        self.scored: Set[Cut] = set()
        self.used: Dict[Cut, Tuple[Span, str]] = {}  # sample cut -> (the backward, the op that used it)

    def constructed(self, qual: str, args: Sequence[Value], kwargs: Dict[str, Value], out: Value) -> None:
        if isinstance(out, ObjV) and qual.rsplit(".", 1)[-1] in WRAPPERS:
            for v in list(args) + list(kwargs.values()):
                if isinstance(v, ObjV):
                    self.bases[out.oid] = v.oid
                    return

    def _dist(self, st: State, obj: ObjV) -> Tuple[str, List[TensorV]]:
        """The reparameterisable distribution under ``obj`` (through Independent/Transformed) and its
        parameters."""
        oid = obj.oid
        for _ in range(4):
            attrs = st.attrs(oid)
            qual = attrs.get("__dist__")
            name = str(getattr(qual, "value", "")).rsplit(".", 1)[-1]
            if name in WRAPPERS and oid in self.bases:
                oid = self.bases[oid]
                continue
            params = attrs.get("__params__")
            ps = [v for v in st.lists.get(params.lid, ()) if isinstance(v, TensorV)] if isinstance(params, SeqV) else []
            return name, ps
        return "", []

    def after_method(self, st: State, obj: ObjV, name: str, args: Sequence[Value], out: Value, node: ast.AST) -> None:
        if name in SCORING:
            for a in args:
                for t in self.it.graph.slot_tensors(st, a):
                    c = self.flow.cuts.get(t.tid)
                    if c is not None and c in self.cuts:
                        self.scored.add(c)
            return
        if name not in ("sample", "sample_n") or not isinstance(out, TensorV) or not st.grad_enabled:
            return
        dist, ps = self._dist(st, obj)
        live = [p for p in ps if st.t.get(p.tid) is not None and st.t[p.tid].rg is True]
        if dist not in REPARAMETERIZED or not live:
            return
        span = self.it.span_of(node)
        cut = self.flow._cut_here("sample", span, f"`.{name}()`")
        self.flow.cuts[out.tid] = cut
        self.flow.reach.note_cut(st, cut, live)
        self.cuts[cut] = (dist, ())

    def after_backward(self, order: Sequence[Any], span: Span) -> None:
        """A sample cut is an operand of an op this backward runs (not a scoring method)."""
        if not self.cuts:
            return
        operand_cuts = self.flow.reach.operand_cuts
        for n in order:
            rec = operand_cuts.get(n.id)
            if rec is None or rec[0] in SCORING:
                continue
            for cut, _, _ in rec[1]:
                if cut in self.cuts and cut not in self.used:
                    self.used[cut] = (span, rec[0])

    def finish(self) -> None:
        for cut, (bspan, op) in self.used.items():
            if cut in self.scored or cut.span is None:
                continue
            dist = self.cuts[cut][0]
            why = (f"{cut.what} of a `{dist}` whose parameters require grad runs under no_grad: the sample is a "
                   f"constant to autograd, and a loss uses it through `{op}` (draw it with `.rsample()`, which keeps "
                   f"the gradient to the distribution's parameters)")
            self.it.emit(Event("dead_term", cut.span, {"why": why, "backward_line": bspan.row, "kind": "sample"},
                               related=(Related(bspan, "the backward that gets no gradient through the sample",
                                                "backward"),)))
