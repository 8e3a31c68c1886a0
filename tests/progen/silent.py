"""Silent-gradient vocabulary (issue 24): gradient that never reaches a parameter (a term taken
out with ``.item()``/``float()``/``.detach()``/no_grad, a weight re-wrapped as a new leaf, a
straight-through path switched off by ``eval()``, a hook that records a detached copy, a
parameter no loss uses), gradient that arrives non-finite (``torch.where``/masking whose
unselected branch is nan or inf), hooks on a module called twice that overwrite what the first
call stored, ``fill_`` of an expanded tensor (allowed; raises only when a backward goes through
it), and overlapping shifts of a buffer.

Same contract as ``lifetime.py`` and ``flow.py``: each pattern returns ``(variant, intent)``.
The oracle of the silent hazards is the run itself, the same for every program: after the last
iteration :func:`_audit` checks every parameter the optimizers hold (``requires_grad`` ones): a
``.grad`` that is None or all zeros, or that is not finite, prints ``MISMATCH`` (intent
``"silent"``). The audit knows nothing of the planted hazard, so a clean look-alike that left a
parameter untrained would be caught as well. Overlapping shifts compare the buffer with the
last observations (the values smear; no gradient is missing).
"""
from __future__ import annotations

from typing import Callable, Dict, Tuple

from .builder import Builder, data_lines, logging_noise, maybe, mlp_class, pick
from .lifetime import _opt, _train_tail

Pattern = Callable[[Builder], Tuple[str, str]]

AUDIT = "audit_gradients"


def _audit(b: Builder, *opts: str) -> None:
    """The run's oracle, appended after the loop: every optimized parameter got a finite, non-zero gradient."""
    if AUDIT not in b._used:
        b._used.add(AUDIT)
        b.defs(f"def {AUDIT}(*optimizers):\n"
               f"    \"\"\"After the last backward: every parameter an optimizer holds got a finite, non-zero gradient.\"\"\"\n"
               f"    for opt in optimizers:\n"
               f"        for group in opt.param_groups:\n"
               f"            for p in group[\"params\"]:\n"
               f"                if not p.requires_grad:\n"
               f"                    continue\n"
               f"                if p.grad is None or not bool(p.grad.ne(0).any()):\n"
               f"                    print(\"MISMATCH: a parameter of the optimizer received no gradient\")\n"
               f"                elif not bool(torch.isfinite(p.grad).all()):\n"
               f"                    print(\"MISMATCH: a parameter of the optimizer received a non-finite gradient\")")
    b.after(f"{AUDIT}({', '.join(opts)})")


# --- gradient that never reaches a parameter ---------------------------------------------------------


def cut_term(b: Builder) -> Tuple[str, str]:
    """A learned log-variance that reaches the loss only through its weighting term: kept a tensor
    (clean, also when logged with .item()), or taken out with .item()/float()/.tolist()/.detach()/
    no_grad before the term is built (silent: it never gets a gradient)."""
    D, O = 3, 2
    cls = b.cls("cls", "weighted")
    body = pick(b.rng, ["body", "net", "regressor"])
    lv = pick(b.rng, ["log_var", "log_sigma", "log_scale", "s"])
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.{body} = nn.Linear({D}, {O})\n"
           f"        self.{lv} = nn.Parameter(torch.zeros(1))\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        return self.{body}(x)")
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    err, s = b.local("err", "err"), b.local("w", "weightterm")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{err} = nn.functional.mse_loss({model}({x}), {y})")
    variant = pick(b.rng, ["tensor", "tensor-logged", "item", "float", "tolist", "detach", "no-grad"],
                   weights=[3, 2, 2, 2, 1, 2, 1])
    param = f"{model}.{lv}"
    if variant in ("tensor", "tensor-logged"):
        b.step(f"{s} = {param}.sum()")
        if variant == "tensor-logged":
            b.step(pick(b.rng, [f"print(\"weight\", math.exp(-{param}.item()))", f"logged = float({param})",
                                f"history = {param}.tolist()"]))
            b.need("import math")
        b.step(f"{loss} = {err} * torch.exp(-{s}) + {s}")
    elif variant in ("item", "float", "tolist"):
        b.need("import math")
        read = {"item": f"{param}.item()", "float": f"float({param})", "tolist": f"{param}.tolist()[0]"}[variant]
        b.step(f"{s} = {read}", mark="cause")
        b.step(f"{loss} = {err} * math.exp(-{s}) + {s}")
    elif variant == "detach":
        b.step(f"{s} = {param}.detach().sum()", mark="cause")
        b.step(f"{loss} = {err} * torch.exp(-{s}) + {s}")
    else:
        b.step(f"with torch.no_grad():\n    {s} = {param}.sum()", mark="cause")
        b.step(f"{loss} = {err} * torch.exp(-{s}) + {s}")
    noise = logging_noise(b, loss)
    if noise:
        b.step(noise)
    _train_tail(b, opt, loss)
    _audit(b, opt)
    return variant, "clean" if variant in ("tensor", "tensor-logged") else "silent"


def rewrap_leaf(b: Builder) -> Tuple[str, str]:
    """A weight generated by a hyper-network: used as computed or cloned (clean), re-wrapped as a new
    leaf (nn.Parameter, detach().requires_grad_(), a copy through .tolist(): silent, the generator
    never trains), or given requires_grad = True although it is not a leaf (raises)."""
    D, O, E = 3, 2, 4
    cls = b.cls("cls", "hyper")
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.embedding = nn.Parameter(torch.randn({E}))\n"
           f"        self.generator = nn.Linear({E}, {O * D})\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        w = self.generator(self.embedding).view({O}, {D})")
    variant = pick(b.rng, ["direct", "clone", "parameter", "detach-leaf", "tolist-copy", "set-requires-grad"],
                   weights=[3, 1, 3, 2, 1, 1])
    line = {"clone": "w = w.clone()", "parameter": "w = nn.Parameter(w)",
            "detach-leaf": "w = w.detach().requires_grad_()",
            "tolist-copy": "w = torch.tensor(w.tolist(), requires_grad=True)",
            "set-requires-grad": "w.requires_grad = True"}.get(variant)
    if line:
        b.add("defs", "        " + line, mark=None if variant == "clone" else "cause")
    b.add("defs", "        return nn.functional.linear(x, w)")
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y})")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    if variant == "set-requires-grad":
        return variant, "nonleaf-requires-grad"
    return variant, "clean" if variant in ("direct", "clone") else "silent"


def ste_mode(b: Builder) -> Tuple[str, str]:
    """A quantizer that passes gradients straight through in training mode and rounds hard in eval
    mode: an evaluation helper that restores the mode, or a step that sets train() (clean); a
    helper that leaves the model in eval, or train(False) "to freeze batch norm" (silent: the
    encoder's gradient is zero); a quantizer that always rounds (silent)."""
    D, H = 4, 3
    variant = pick(b.rng, ["restored", "train-each-step", "eval-left", "train-false", "round-only"],
                   weights=[2, 2, 3, 2, 1])
    qcls = pick(b.rng, ["Quantizer", "RoundSTE", "FakeQuant"])
    if variant == "round-only":
        b.defs(f"class {qcls}(nn.Module):\n"
               f"    def forward(self, y):")
        b.add("defs", "        return torch.round(y)", mark="cause")
    else:
        b.defs(f"class {qcls}(nn.Module):\n"
               f"    def forward(self, y):\n"
               f"        if self.training:\n"
               f"            return y + (torch.round(y) - y).detach()\n"
               f"        return torch.round(y)")
    cls = b.cls("cls", "codec")
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.enc = nn.Linear({D}, {H})\n"
           f"        self.quant = {qcls}()\n"
           f"        self.dec = nn.Linear({H}, {D})\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        return self.dec(self.quant(self.enc(x) * 4.0) / 4.0)")
    ev = pick(b.rng, ["evaluate", "validate", "val_loss"])
    if variant == "restored":
        b.defs(f"def {ev}(m, x):\n"
               f"    was_training = m.training\n"
               f"    m.eval()\n"
               f"    with torch.no_grad():\n"
               f"        value = nn.functional.mse_loss(m(x), x).item()\n"
               f"    m.train(was_training)\n"
               f"    return value")
    else:
        b.defs(f"def {ev}(m, x):")
        b.add("defs", "    m.eval()", mark="cause" if variant == "eval-left" else None)
        b.add("defs", "    with torch.no_grad():\n"
                      "        return nn.functional.mse_loss(m(x), x).item()")
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    if variant == "train-false":
        b.setup(f"{model}.train(False)", mark="cause")
    x, loss = b.local("x"), b.local("loss")
    if variant == "train-each-step":
        b.step(f"{model}.train()")
    b.step(f"{x} = torch.randn(8, {D})")
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {x})")
    _train_tail(b, opt, loss)
    b.step(f"val = {ev}({model}, torch.randn(8, {D}))")
    _audit(b, opt)
    return variant, "clean" if variant in ("restored", "train-each-step") else "silent"


def hook_detach(b: Builder) -> Tuple[str, str]:
    """An auxiliary probe read through a forward hook for an extra loss term: recorded live or
    cloned (clean), recorded detached / clone().detach() / .data (silent: the probe never trains),
    or the loss made of the detached record alone (raises: nothing requires grad)."""
    D, H, O = 3, 4, 2
    cls = b.cls("cls", "probed")
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.trunk = nn.Linear({D}, {H})\n"
           f"        self.probe = nn.Linear({H}, 1)\n"
           f"        self.head = nn.Linear({H}, {O})\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        h = torch.tanh(self.trunk(x))\n"
           f"        self.probe(h)  # read by a hook for the auxiliary loss\n"
           f"        return self.head(h)")
    variant = pick(b.rng, ["live", "clone", "detach", "clone-detach", "data", "only-detach"],
                   weights=[3, 2, 3, 2, 1, 1])
    rec = pick(b.rng, ["Recorder", "FeatureHook", "Probe"])
    record = {"live": "output", "clone": "output.clone()", "detach": "output.detach()",
              "clone-detach": "output.clone().detach()", "data": "output.data",
              "only-detach": "output.detach()"}[variant]
    b.defs(f"class {rec}:\n"
           f"    def __init__(self, module):\n"
           f"        self.value = None\n"
           f"        module.register_forward_hook(self.hook)\n"
           f"\n"
           f"    def hook(self, module, inputs, output):")
    b.add("defs", f"        self.value = {record}", mark="cause" if variant not in ("live", "clone") else None)
    model, opt, hook = b.var("model"), b.var("opt"), b.var("recorder", "rec")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{hook} = {rec}({model}.probe)")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"out = {model}({x})")
    if variant == "only-detach":
        b.step(f"{loss} = {hook}.value.pow(2).mean()")
    else:
        b.step(f"{loss} = nn.functional.mse_loss(out, {y}) + 0.1 * {hook}.value.pow(2).mean()")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    if variant == "only-detach":
        return variant, "no-grad-fn"
    return variant, "clean" if variant in ("live", "clone") else "silent"


def hook_overwrite(b: Builder) -> Tuple[str, str]:
    """A forward hook on a module that the forward calls twice (two views share a projection):
    stored by assignment (silent: the second call overwrites the first; the first view's adapter
    never trains) or appended per call / keyed per call (clean). The loss penalises what was stored."""
    D, H = 3, 4
    cls = b.cls("cls", "twoview")
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.adapt_a = nn.Linear({D}, {H})\n"
           f"        self.adapt_b = nn.Linear({D}, {H})\n"
           f"        self.shared = nn.Linear({H}, {H})\n"
           f"\n"
           f"    def forward(self, xa, xb):\n"
           f"        return self.shared(self.adapt_a(xa)), self.shared(self.adapt_b(xb))")
    variant = pick(b.rng, ["assign", "assign-dict", "append", "keyed"], weights=[2, 2, 3, 2])
    store_cls = pick(b.rng, ["ActivationStore", "FeatureCache", "Taps"])
    if variant in ("assign", "append"):
        b.defs(f"class {store_cls}:\n"
               f"    def __init__(self, module):\n"
               f"        self.outputs = []\n"
               f"        module.register_forward_hook(self.hook)\n"
               f"\n"
               f"    def hook(self, module, inputs, output):")
        b.add("defs", "        self.outputs = [output]" if variant == "assign" else "        self.outputs.append(output)",
              mark="cause" if variant == "assign" else None)
        b.add("defs", "\n"
                      "    def values(self):\n"
                      "        return self.outputs\n"
                      "\n"
                      "    def clear(self):\n"
                      "        self.outputs = []")
    else:
        b.defs(f"class {store_cls}:\n"
               f"    def __init__(self, module, name):\n"
               f"        self.name, self.outputs = name, {{}}\n"
               f"        module.register_forward_hook(self.hook)\n"
               f"\n"
               f"    def hook(self, module, inputs, output):")
        b.add("defs", "        self.outputs[self.name] = output" if variant == "assign-dict"
              else "        self.outputs[(self.name, len(self.outputs))] = output",
              mark="cause" if variant == "assign-dict" else None)
        b.add("defs", "\n"
                      "    def values(self):\n"
                      "        return list(self.outputs.values())\n"
                      "\n"
                      "    def clear(self):\n"
                      "        self.outputs = {}")
    model, opt, store = b.var("model"), b.var("opt"), b.var("store", "store")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{store} = {store_cls}({model}.shared)" if variant in ("assign", "append")
            else f"{store} = {store_cls}({model}.shared, \"shared\")")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    loss = b.local("loss")
    b.step(f"{store}.clear()")
    b.step(f"{model}(torch.randn(4, {D}), torch.randn(4, {D}))")
    b.step(f"{loss} = sum((f - 1.0).pow(2).mean() for f in {store}.values())")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    return variant, "silent" if variant in ("assign", "assign-dict") else "clean"


def unused_param(b: Builder) -> Tuple[str, str]:
    """A parameter the forward never uses, handed to the optimizer (silent), used (clean), frozen on
    purpose or left out of the optimizer (clean); or an optimizer built over an instance that is
    replaced before training (silent: no loss reaches the parameters it holds)."""
    D, O = 3, 2
    cls = b.cls("cls", "posnet")
    extra = pick(b.rng, ["offset", "pos_embed", "bias_shift", "prompt"])
    variant = pick(b.rng, ["used", "unused", "frozen", "not-in-optimizer", "replaced"], weights=[3, 3, 1, 2, 2])
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.body = nn.Linear({D}, {O})\n"
           f"        self.{extra} = nn.Parameter(torch.randn({D}) * 0.1)\n"
           f"\n"
           f"    def forward(self, x):")
    if variant in ("unused", "frozen", "not-in-optimizer"):
        b.add("defs", "        return self.body(x)", mark="cause" if variant == "unused" else None)
    else:
        b.add("defs", f"        return self.body(x + self.{extra})")
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {cls}()")
    if variant == "frozen":
        b.setup(f"{model}.{extra}.requires_grad_(False)")
    params = f"{model}.body.parameters()" if variant == "not-in-optimizer" else f"{model}.parameters()"
    b.setup(f"{opt} = {_opt(b, params)}")
    if variant == "replaced":
        b.setup(f"{model} = {cls}()  # re-created after loading the config", mark="cause")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y})")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    return variant, "silent" if variant in ("unused", "replaced") else "clean"


# --- gradient that arrives non-finite ------------------------------------------------------------------


def nan_where(b: Builder) -> Tuple[str, str]:
    """torch.where that guards a sqrt / a p*log(p) of normalised ReLU weights / a division by a norm: the branch not selected is
    still differentiated, so a nan or inf there makes the gradient nan (silent); the same guards
    with a safe inner value (double where, clamp) are clean."""
    D, O = 3, 4
    model, opt = b.var("model"), b.var("opt")
    net = mlp_class(b, D, O)
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, loss, out = b.local("x"), b.local("loss"), b.local("out")
    kind = pick(b.rng, ["sqrt", "plogp", "normalize"])
    safe = maybe(b.rng, 0.5)
    variant = f"{kind}-{'safe' if safe else 'raw'}"
    b.step(f"{x} = torch.randn(6, {D})")
    b.step(f"{out} = {model}({x})")
    if kind == "sqrt":
        b.step(f"c = {out} - {out}.mean(dim=0, keepdim=True)")
        if safe:
            b.step("safe = torch.where(c > 0, c, torch.ones_like(c))")
            b.step("feat = torch.where(c > 0, torch.sqrt(safe), torch.zeros_like(c))")
        else:
            b.step("feat = torch.where(c > 0, torch.sqrt(c), torch.zeros_like(c))", mark="cause")
    elif kind == "plogp":
        b.step(f"r = torch.relu({out} - {out}.mean(dim=0, keepdim=True))")
        b.step("p = r / r.sum(dim=1, keepdim=True).clamp_min(1e-6)  # routing weights with exact zeros")
        if safe:
            b.step("feat = torch.where(p > 0, p * torch.log(p.clamp_min(1e-12)), torch.zeros_like(p))")
        else:
            b.step("feat = torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))", mark="cause")
    else:
        b.step(f"v = {out} * torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 1.0])[:, None]  # padded rows are zero")
        b.step("n = v.norm(dim=1, keepdim=True)")
        if safe:
            b.step("feat = torch.where(n > 0, v / n.clamp_min(1e-12), torch.zeros_like(v))")
        else:
            b.step("feat = torch.where(n > 0, v / n, torch.zeros_like(v))", mark="cause")
    b.step(f"{loss} = (feat - 0.5).pow(2).mean()")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    return variant, "clean" if safe else "silent"


def nan_mask_index(b: Builder) -> Tuple[str, str]:
    """A masked softmax gives padded positions probability exactly 0: -log(p) taken before the mask
    is infinite there and the masked selection's backward multiplies it by 0 (silent: nan
    gradient); log_softmax, or the log of the selected probabilities, is clean."""
    D, C = 3, 4
    model, opt = b.var("model"), b.var("opt")
    net = mlp_class(b, D, C)
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    pad = b.var("pad", "pad")
    b.setup(f"{pad} = torch.tensor([[False, False, True, True], [False, False, False, True], [False, True, True, True]])")
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn(3, {D})")
    b.step(f"scores = {model}({x}).masked_fill({pad}, float(\"-inf\"))")
    variant = pick(b.rng, ["log-then-mask", "log-softmax", "mask-then-log"], weights=[3, 2, 2])
    if variant == "log-then-mask":
        b.step("probs = torch.softmax(scores, dim=1)")
        b.step(f"{loss} = -torch.log(probs)[~{pad}].mean()", mark="cause")
    elif variant == "log-softmax":
        b.step(f"{loss} = -torch.log_softmax(scores, dim=1)[~{pad}].mean()")
    else:
        b.step("probs = torch.softmax(scores, dim=1)")
        b.step(f"{loss} = -torch.log(probs[~{pad}]).mean()")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    return variant, "silent" if variant == "log-then-mask" else "clean"


# --- writes into shared memory ------------------------------------------------------------------------


def expand_fill(b: Builder) -> Tuple[str, str]:
    """fill_ of an expanded tensor: torch allows it (every aliased element gets the same value); it
    raises only when a backward goes through the filled tensor. Clean when the filled tensor is not
    used, used detached, or made under no_grad; clean after a clone; raises when the loss uses it."""
    D, H = 3, 3
    w, opt = b.var("weight", "w"), b.var("opt")
    b.setup(f"{w} = nn.Parameter(torch.randn({H}, {D}))")
    b.setup(f"{opt} = torch.optim.SGD([{w}], lr=0.1)")
    x, loss, t = b.local("x"), b.local("loss"), b.local("scale", "scale")
    variant = pick(b.rng, ["unused", "detached", "no-grad", "clone", "through"], weights=[2, 2, 1, 1, 3])
    stat = pick(b.rng, [f"{w}.sum(0, keepdim=True)", f"{w}.abs().amax(dim=0, keepdim=True)", f"{w}.mean(0, keepdim=True)"])
    fill = pick(b.rng, ["fill_(0.5)", "fill_(1.0)", "zero_()"])
    b.step(f"{x} = torch.randn(5, {D})")
    if variant == "no-grad":
        b.step(f"with torch.no_grad():\n    {t} = {stat}.expand({H}, {D})\n    {t}.{fill}")
    else:
        b.step(f"{t} = {stat}.expand({H}, {D})" + (".clone()" if variant == "clone" else ""))
        b.step(f"{t}.{fill}", mark="cause" if variant == "through" else None)
    if variant == "unused":
        b.step(f"{loss} = ({x} @ {w}.t()).pow(2).mean()")
    elif variant == "detached":
        b.step(f"{loss} = ({x} @ ({w} * {t}.detach()).t()).pow(2).mean()")
    else:
        b.step(f"{loss} = ({x} @ ({w} * {t}).t()).pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, "expanded-write" if variant == "through" else "clean"


def overlap_shift(b: Builder) -> Tuple[str, str]:
    """A history buffer shifted along time in place: a 2-D shift from an overlapping slice of itself
    smears the newest column over the history without an error (silent: the buffer is compared
    with the last observations), a clone or torch.roll is clean, a 1-D overlapping shift raises."""
    B, T = 2, 4
    model, opt = b.var("model"), b.var("opt")
    net = mlp_class(b, T, 1)
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    buf, hist = b.var("buffer", "buf"), b.var("history", "hist")
    b.setup(f"{buf} = torch.zeros({B}, {T})")
    b.setup(f"{hist} = []")
    variant = pick(b.rng, ["inplace-2d", "clone", "roll", "inplace-1d"], weights=[3, 2, 2, 1])
    obs, loss = b.local("obs"), b.local("loss")
    b.step(f"{obs} = torch.randn({B})")
    if variant == "inplace-2d":
        b.step(f"{buf}[:, 1:] = {buf}[:, :-1]", mark="cause")
    elif variant == "clone":
        b.step(f"{buf}[:, 1:] = {buf}[:, :-1].clone()")
    elif variant == "roll":
        b.step(f"{buf} = torch.roll({buf}, 1, dims=1)")
    else:
        b.step(f"flat = {buf}.view(-1)")
        b.step("flat[1:] = flat[:-1]", mark="cause")
    b.step(f"{buf}[:, 0] = {obs}")
    b.step(f"{hist}.insert(0, {obs})")
    b.step(f"expected = torch.stack(({hist} + [torch.zeros({B})] * {T})[:{T}], dim=1)")
    b.step(f"if not torch.equal({buf}, expected):\n    print(\"MISMATCH: the shifted buffer is not the last observations\")")
    b.step(f"{loss} = {model}({buf}).pow(2).mean()")
    _train_tail(b, opt, loss)
    _audit(b, opt)
    intent = {"inplace-2d": "silent", "inplace-1d": "overlap-write"}.get(variant, "clean")
    return variant, intent


PATTERNS: Dict[str, Tuple[Pattern, float]] = {
    "cut-term": (cut_term, 3),
    "rewrap-leaf": (rewrap_leaf, 2),
    "ste-mode": (ste_mode, 2),
    "hook-detach": (hook_detach, 2),
    "hook-overwrite": (hook_overwrite, 2),
    "unused-param": (unused_param, 2),
    "nan-where": (nan_where, 3),
    "nan-mask-index": (nan_mask_index, 2),
    "expand-fill": (expand_fill, 2),
    "overlap-shift": (overlap_shift, 1),
}
