"""Gradient-flow vocabulary (issue 10): a loss cut from the graph (no_grad, inference_mode,
``.detach()``, ``.item()``, ``.data``, ``.tolist()``, re-wrapping, non-differentiable ops, every
parameter frozen), non-scalar backward, ``requires_grad`` on a non-leaf, ``.grad`` of a
non-leaf, optimizers over non-leaf or never-requiring tensors, ``autograd.grad`` on an unused
input, views made under no_grad then written with grad on, ``detach_()`` on a view,
self-overlapping writes, ``zero_grad`` never called.

Same contract as ``lifetime.py``: each pattern returns ``(variant, intent)``. Silent hazards
(torch raises nothing) carry a self-check that prints ``MISMATCH`` when the gradient is wrong,
so that the oracle sees them; their intent is ``"silent"``.
"""
from __future__ import annotations

from typing import Callable, Dict, Tuple

from .builder import Builder, data_lines, logging_noise, maybe, mlp_class, pick
from .lifetime import _opt, _train_tail

Pattern = Callable[[Builder], Tuple[str, str]]


def _model(b: Builder, din: int = 3, dout: int = 2) -> Tuple[str, str]:
    net = mlp_class(b, din, dout)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    return model, opt


def _eval_helper(b: Builder, model_arg: str = "model") -> str:
    """An evaluation helper under no_grad that returns a number (clean, everywhere in real code)."""
    name = pick(b.rng, ["evaluate", "validate", "eval_loss", "val_step"])
    deco = maybe(b.rng)
    if deco:
        b.defs(f"@torch.no_grad()\n"
               f"def {name}({model_arg}, x, y):\n"
               f"    return nn.functional.mse_loss({model_arg}(x), y).item()")
    else:
        b.defs(f"def {name}({model_arg}, x, y):\n"
               f"    with torch.no_grad():\n"
               f"        return nn.functional.mse_loss({model_arg}(x), y).item()")
    return name


def loss_under_no_grad(b: Builder) -> Tuple[str, str]:
    """The training forward under no_grad / inference_mode (error) or only the evaluation (clean)."""
    D, O = 3, 2
    model, opt = _model(b, D, O)
    x, y, out, loss = b.local("x"), b.local("y"), b.local("out"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    variant = pick(b.rng, ["no-grad", "inference-mode", "decorated-helper", "eval-only", "eval-helper"],
                   weights=[2, 1, 2, 2, 2])
    if variant in ("no-grad", "inference-mode"):
        ctx = "torch.no_grad()" if variant == "no-grad" else "torch.inference_mode()"
        b.step(f"with {ctx}:", mark="cause")
        b.step(f"    {out} = {model}({x})")
        b.step(f"{loss} = nn.functional.mse_loss({out}, {y})")
        _train_tail(b, opt, loss)
        return variant, "no-grad-fn"
    if variant == "decorated-helper":
        fn = pick(b.rng, ["forward_batch", "predict", "run_model", "infer"])
        b.defs(f"@torch.no_grad()\n"
               f"def {fn}(m, x):\n"
               f"    return m(x)")
        b.step(f"{out} = {fn}({model}, {x})", mark="cause")
        b.step(f"{loss} = nn.functional.mse_loss({out}, {y})")
        _train_tail(b, opt, loss)
        return variant, "no-grad-fn"
    b.step(f"{out} = {model}({x})")
    b.step(f"{loss} = nn.functional.mse_loss({out}, {y})")
    _train_tail(b, opt, loss)
    if variant == "eval-only":
        b.step(f"with torch.no_grad():\n    val = nn.functional.mse_loss({model}({x}), {y})")
        b.step("print(f\"val {val.item():.3f}\")" if maybe(b.rng) else "_ = val.item()")
    else:
        ev = _eval_helper(b)
        b.after(f"print({ev}({model}, torch.randn(4, {D}), torch.randn(4, {O})))")
    return variant, "clean"


def cut_loss(b: Builder) -> Tuple[str, str]:
    """The loss built from .detach() / .data / .item() / .tolist() / torch.tensor(...) (error), or
    from the live output with those used for logging only (clean)."""
    D, O = 3, 2
    model, opt = _model(b, D, O)
    x, y, out, loss = b.local("x"), b.local("y"), b.local("out"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{out} = {model}({x})")
    variant = pick(b.rng, ["detach", "data", "tolist", "as-tensor", "stack-list-rewrap", "item-rewrap-rg",
                           "log-detach", "stack-list"],
                   weights=[2, 1, 1, 1, 2, 1, 2, 2])
    if variant == "detach":
        b.step(f"{out} = {out}.detach()" if maybe(b.rng) else f"{out} = {out}.detach().clone()", mark="cause")
    elif variant == "data":
        b.step(f"{out} = {out}.data", mark="cause")
    elif variant == "tolist":
        b.step(f"{out} = torch.tensor({out}.tolist())", mark="cause")
    elif variant == "as-tensor":
        b.step(f"{out} = torch.as_tensor({out}.detach())", mark="cause")
    if variant in ("stack-list", "stack-list-rewrap"):
        parts = b.local("losses", "parts")
        b.step(f"{parts} = [nn.functional.mse_loss({out}[j], {y}[j]) for j in range({4})]")
        if variant == "stack-list":
            b.step(f"{loss} = torch.stack({parts}).mean()")
        else:
            b.step(f"{loss} = torch.tensor({parts}).mean()", mark="cause")
        _train_tail(b, opt, loss)
        return variant, "clean" if variant == "stack-list" else "no-grad-fn"
    if variant == "item-rewrap-rg":
        # a leaf that requires grad: backward runs, no gradient reaches the model (silent)
        b.step(f"{loss} = torch.tensor(nn.functional.mse_loss({out}, {y}).item(), requires_grad=True)", mark="cause")
        _train_tail(b, opt, loss)
        model_ref = model
        b.step(f"if all(p.grad is None for p in {model_ref}.parameters()):\n"
               f"    print(\"MISMATCH: no gradient reached the model\")")
        return variant, "silent"
    b.step(f"{loss} = nn.functional.mse_loss({out}, {y})")
    if variant == "log-detach":
        b.step(pick(b.rng, [f"print({out}.detach().mean().item())", f"stats = {out}.detach().tolist()",
                            f"record = {out}.data.clone()"]))
        noise = logging_noise(b, loss)
        if noise:
            b.step(noise)
        _train_tail(b, opt, loss)
        return variant, "clean"
    _train_tail(b, opt, loss)
    return variant, "no-grad-fn"


def nondiff_op(b: Builder) -> Tuple[str, str]:
    """The loss through argmax / comparisons / integer casts (error); round (differentiable,
    zero gradient: runs); those ops for metrics only (clean)."""
    D, C = 3, 4
    model, opt = _model(b, D, C)
    x, y, out, loss = b.local("x"), b.local("y"), b.local("out"), b.local("loss")
    b.step(f"{x} = torch.randn(6, {D})")
    b.step(f"{y} = torch.randint(0, {C}, (6,))")
    b.step(f"{out} = {model}({x})")
    variant = pick(b.rng, ["argmax", "compare", "long-cast", "round", "metric-only"], weights=[2, 2, 1, 1, 3])
    if variant == "argmax":
        b.step(f"pred = {out}.argmax(dim=1).float()", mark="cause")
        b.step(f"{loss} = nn.functional.mse_loss(pred, {y}.float())")
    elif variant == "compare":
        b.step(f"pred = ({out} > 0).float()", mark="cause")
        b.step(f"{loss} = (pred - nn.functional.one_hot({y}, {C}).float()).pow(2).mean()")
    elif variant == "long-cast":
        b.step(f"pred = ({out} * 10).long()", mark="cause")
        b.step(f"{loss} = (pred.float() - {y}.float()[:, None]).abs().mean()")
    elif variant == "round":
        b.step(f"pred = torch.round({out})")
        b.step(f"{loss} = (pred - {y}.float()[:, None]).pow(2).mean()")
    else:
        b.step(f"{loss} = nn.functional.cross_entropy({out}, {y})")
        b.step(f"acc = ({out}.argmax(dim=1) == {y}).float().mean()")
    _train_tail(b, opt, loss)
    if variant == "metric-only":
        b.step("print(f\"acc={acc.item():.2f}\")")
    return variant, "clean" if variant in ("metric-only", "round") else "no-grad-fn"


def all_frozen(b: Builder) -> Tuple[str, str]:
    """Every parameter frozen before the loss (error) or only the backbone (clean)."""
    D, O = 3, 2
    net = mlp_class(b, D, O)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    variant = pick(b.rng, ["loop-attr", "loop-method", "module-method", "backbone-only", "refreeze-head"],
                   weights=[2, 1, 2, 2, 1])
    if variant == "loop-attr":
        b.setup(f"for p in {model}.parameters():\n    p.requires_grad = False", mark="cause")
    elif variant == "loop-method":
        b.setup(f"for p in {model}.parameters():\n    p.requires_grad_(False)", mark="cause")
    elif variant == "module-method":
        b.setup(f"{model}.requires_grad_(False)", mark="cause")
    elif variant == "backbone-only":
        b.setup(f"for p in list({model}.children())[0].parameters():\n    p.requires_grad = False")
    else:
        b.setup(f"{model}.requires_grad_(False)\n"
                f"for p in list({model}.children())[-1].parameters():\n"
                f"    p.requires_grad_(True)")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y})")
    _train_tail(b, opt, loss)
    return variant, "clean" if variant in ("backbone-only", "refreeze-head") else "no-grad-fn"


def nonscalar_backward(b: Builder) -> Tuple[str, str]:
    """backward() of a per-sample loss (error) or of its mean / with a gradient (clean)."""
    D, O = 3, 2
    model, opt = _model(b, D, O)
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    how = pick(b.rng, ["reduction", "module-reduction", "per-sample"])
    if how == "reduction":
        b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y}, reduction=\"none\")", mark="cause")
    elif how == "module-reduction":
        crit = b.var("criterion", "crit")
        b.setup(f"{crit} = nn.MSELoss(reduction=\"none\")")
        b.step(f"{loss} = {crit}({model}({x}), {y})", mark="cause")
    else:
        b.step(f"{loss} = ({model}({x}) - {y}).pow(2).sum(dim=1)", mark="cause")
    variant = pick(b.rng, ["plain", "mean", "sum-backward", "gradient", "weighted-mean"], weights=[3, 2, 1, 1, 1])
    b.step(f"{opt}.zero_grad()")
    if variant == "plain":
        b.step(f"{loss}.backward()")
    elif variant == "mean":
        b.step(f"{loss} = {loss}.mean()")
        b.step(f"{loss}.backward()")
    elif variant == "sum-backward":
        b.step(f"{loss}.sum().backward()")
    elif variant == "gradient":
        b.step(f"{loss}.backward(torch.ones_like({loss}))" if maybe(b.rng)
               else f"{loss}.backward(gradient=torch.full_like({loss}, 0.25))")
    else:
        b.step(f"wts = torch.rand({loss}.shape[0], *[1] * ({loss}.dim() - 1))")
        b.step(f"({loss} * wts).mean().backward()")
    b.step(f"{opt}.step()")
    return f"{how}-{variant}", "non-scalar-backward" if variant == "plain" else "clean"


def nonleaf_requires_grad(b: Builder) -> Tuple[str, str]:
    """requires_grad set on a computed tensor (error) or on a fresh leaf (clean)."""
    D, O = 3, 2
    model, opt = _model(b, D, O)
    x, y, h, loss = b.local("x"), b.local("y"), b.local("out"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    variant = pick(b.rng, ["set-true", "set-false", "leaf-input", "requires-grad-method", "scaled-leaf"],
                   weights=[2, 2, 2, 1, 2])
    if variant == "leaf-input":
        b.step(f"{x}.requires_grad = True")
        b.step(f"{h} = {model}({x})")
    elif variant == "scaled-leaf":
        b.step(f"{x} = {x} * 0.5")
        b.step(f"{x}.requires_grad = True")
        b.step(f"{h} = {model}({x})")
    else:
        b.step(f"{h} = {model}({x})")
        if variant == "set-true":
            b.step(f"{h}.requires_grad = True", mark="cause")
        elif variant == "set-false":
            b.step(f"{h}.requires_grad = False", mark="cause")
        else:
            b.step(f"{h}.requires_grad_(True)")
    b.step(f"{loss} = nn.functional.mse_loss({h}, {y})")
    _train_tail(b, opt, loss)
    return variant, "nonleaf-requires-grad" if variant in ("set-true", "set-false") else "clean"


def nonleaf_grad(b: Builder) -> Tuple[str, str]:
    """A weight made by an op after requires_grad=True (not a leaf): its .grad is None (torch
    warns); an update with it raises a TypeError. Scaling (``* 0.01``) also leaves a graph that
    the first backward frees (the second iteration raises); a dtype cast does not."""
    D, O = 3, 2
    w, bias = b.var("w", "w"), b.var("b", "bias")
    make = pick(b.rng, ["scaled", "cast", "double", "leaf-last", "same-dtype-to"], weights=[2, 2, 1, 2, 1])
    use = pick(b.rng, ["update", "log", "retain-grad-log"], weights=[2, 2, 1])
    nonleaf = make in ("scaled", "cast", "double")
    mark = "cause" if nonleaf and use != "retain-grad-log" else None
    if make == "scaled":
        b.setup(f"{w} = torch.randn({D}, {O}, requires_grad=True) * 0.01", mark=mark)
    elif make == "cast":
        b.setup(f"{w} = torch.randn({D}, {O}, requires_grad=True).to(torch.float64)", mark=mark)
    elif make == "double":
        b.setup(f"{w} = torch.randn({D}, {O}, requires_grad=True).double()", mark=mark)
    elif make == "same-dtype-to":
        b.setup(f"{w} = torch.randn({D}, {O}, requires_grad=True).to(\"cpu\")")
    else:
        b.setup(f"{w} = (torch.randn({D}, {O}) * 0.01).requires_grad_()")
    if use == "retain-grad-log":
        b.setup(f"{w}.retain_grad()")
    b.setup(f"{bias} = torch.zeros({O}, requires_grad=True, dtype={w}.dtype)")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(f"{x} = torch.randn(4, {D}, dtype={w}.dtype)")
    b.step(f"{y} = torch.randn(4, {O}, dtype={w}.dtype)")
    b.step(f"{loss} = (({x} @ {w} + {bias}) - {y}).pow(2).mean()")
    b.step(f"{loss}.backward()")
    variant = f"{make}-{use}"
    if use in ("log", "retain-grad-log"):
        b.step(f"print(\"grad\", {w}.grad)")
        b.step(f"with torch.no_grad():\n    {bias} -= 0.1 * {bias}.grad")
        b.step(f"{bias}.grad = None")
        if make == "scaled":  # the scaling's graph is freed by the first backward
            return variant, "freed-graph"
        if nonleaf and use == "log":
            return variant, "warn:nonleaf-grad"
        return variant, "clean"
    b.step(f"with torch.no_grad():\n    {w} -= 0.1 * {w}.grad\n    {bias} -= 0.1 * {bias}.grad")
    b.step(f"{w}.grad = None\n{bias}.grad = None")
    return variant, "none-grad" if nonleaf else "clean"


def optimizer_params(b: Builder) -> Tuple[str, str]:
    """An optimizer over a non-leaf (error) or over a tensor that never requires grad (silent)."""
    D, O = 3, 2
    w, bias, opt = b.var("w", "w"), b.var("b", "bias"), b.var("opt")
    variant = pick(b.rng, ["nonleaf", "never-requires", "leaf", "parameter"], weights=[2, 2, 2, 1])
    if variant == "nonleaf":
        b.setup(f"{w} = torch.randn({D}, {O}, requires_grad=True) * 0.1")
    elif variant == "never-requires":
        b.setup(f"{w} = torch.randn({D}, {O}) * 0.1", mark="cause")
    elif variant == "leaf":
        b.setup(f"{w} = (torch.randn({D}, {O}) * 0.1).requires_grad_()")
    else:
        b.setup(f"{w} = nn.Parameter(torch.randn({D}, {O}) * 0.1)")
    b.setup(f"{bias} = torch.zeros({O}, requires_grad=True)")
    b.setup(f"{opt} = {_opt(b, f'[{w}, {bias}]')}", mark="cause" if variant == "nonleaf" else None)
    w0 = b.var("w0", "w0")
    b.setup(f"{w0} = {w}.detach().clone()")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = (({x} @ {w} + {bias}) - {y}).pow(2).mean()")
    _train_tail(b, opt, loss)
    b.after(f"if torch.equal({w}.detach(), {w0}):\n    print(\"MISMATCH: the optimizer never moved the weight\")")
    if variant == "nonleaf":
        return variant, "optimize-nonleaf"
    return variant, "silent" if variant == "never-requires" else "clean"


def unused_input(b: Builder) -> Tuple[str, str]:
    """autograd.grad over parameters one of which the loss does not use."""
    D, O = 3, 2
    cls = b.cls("cls", "netu")
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.body = nn.Linear({D}, {O})\n"
           f"        self.aux = nn.Linear({D}, 1)\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        return self.body(x)")
    model = b.var("model")
    b.setup(f"{model} = {cls}()")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y})")
    variant = pick(b.rng, ["all-params", "allow-unused", "used-only", "explicit-pair"], weights=[3, 2, 2, 2])
    if variant == "all-params":
        b.step(f"grads = torch.autograd.grad({loss}, list({model}.parameters()))", mark="cause")
    elif variant == "allow-unused":
        b.step(f"grads = torch.autograd.grad({loss}, list({model}.parameters()), allow_unused=True)")
    elif variant == "used-only":
        b.step(f"grads = torch.autograd.grad({loss}, list({model}.body.parameters()))")
    else:
        b.step(f"grads = torch.autograd.grad({loss}, [{model}.body.weight, {model}.aux.weight])", mark="cause")
    b.step(f"with torch.no_grad():\n"
           f"    for p, g in zip({model}.parameters(), grads):\n"
           f"        if g is not None:\n"
           f"            p -= 0.1 * g")
    return variant, "unused-input" if variant in ("all-params", "explicit-pair") else "clean"


def nograd_view(b: Builder) -> Tuple[str, str]:
    """A view made under no_grad, written in place with grad on (error), or written under no_grad
    too / made from a clone (clean)."""
    D, H = 3, 4
    net = mlp_class(b, D, H)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    first = b.local("w0", "firstw")
    b.setup(f"{first} = next({model}.parameters())")
    variant = pick(b.rng, ["param-view", "act-view", "param-view-no-grad-write", "clone-view", "view-with-grad"],
                   weights=[2, 2, 2, 1, 1])
    x, loss, v = b.local("x"), b.local("loss"), b.local("v", "view")
    if variant in ("param-view", "param-view-no-grad-write"):
        b.setup(f"with torch.no_grad():\n    {v} = {first}.view(-1)")
        if variant == "param-view":
            b.setup(f"{v}.mul_(0.5)", mark="cause")
        else:
            b.setup(f"with torch.no_grad():\n    {v}.mul_(0.5)")
        b.step(f"{x} = torch.randn(4, {D})")
        b.step(f"{loss} = {model}({x}).pow(2).mean()")
    else:
        b.step(f"{x} = torch.randn(4, {D})")
        b.step(f"h = {model}({x})")
        if variant == "act-view":
            b.step(f"with torch.no_grad():\n    {v} = h[:, :2]")
            b.step(f"{v}.add_(1.0)", mark="cause")
        elif variant == "clone-view":
            b.step(f"with torch.no_grad():\n    {v} = h[:, :2].clone()")
            b.step(f"{v}.add_(1.0)")
        else:
            b.step(f"{v} = h[:, :2]")
            b.step(f"{v} = {v} + 1.0")
        b.step(f"{loss} = h.pow(2).mean() + {v}.sum() * 0")
    _train_tail(b, opt, loss)
    return variant, "nograd-view-inplace" if variant in ("param-view", "act-view") else "clean"


def detach_view(b: Builder) -> Tuple[str, str]:
    """detach_() on a view (error) or detach() (clean)."""
    D, H = 3, 4
    model, opt = _model(b, D, H)
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn(4, {D})")
    b.step(f"h = {model}({x})")
    view = pick(b.rng, ["h[:, 0]", "h.t()", "h.view(-1)", "h[1:]", "h.transpose(0, 1)"])
    variant = pick(b.rng, ["detach_", "detach", "base-detach_"], weights=[3, 2, 1])
    tgt = b.local("target", "tgt")
    b.step(f"{tgt} = {view}")
    if variant == "detach_":
        b.step(f"{tgt}.detach_()", mark="cause")
    elif variant == "detach":
        b.step(f"{tgt} = {tgt}.detach()")
    else:
        b.step("stats = h.clone()\nstats.detach_()")
    b.step(f"{loss} = h.pow(2).mean() + 0.1 * ({tgt} * 0).sum()" if variant != "base-detach_"
           else f"{loss} = h.pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, "detach-view-inplace" if variant == "detach_" else "clean"


def overlap_write(b: Builder) -> Tuple[str, str]:
    """A write whose source overlaps its destination (error) or a clone of it (clean)."""
    variant = pick(b.rng, ["shift-copy", "index-self", "shift-clone", "index-clone", "disjoint"],
                   weights=[2, 2, 2, 1, 1])
    buf = b.var("buffer", "buf")
    b.setup(f"{buf} = torch.arange(8.0)")
    idx = b.var("indices", "idx")
    b.setup(f"{idx} = torch.tensor([0, 2, 1, 3])")
    if variant == "shift-copy":
        b.step(f"{buf}[1:].copy_({buf}[:-1])", mark="cause")
    elif variant == "shift-clone":
        b.step(f"{buf}[1:] = {buf}[:-1].clone()")
    elif variant == "index-self":
        b.step(f"{idx}[{idx}] = {idx}", mark="cause")
    elif variant == "index-clone":
        b.step(f"{idx}[{idx}.clone()] = {idx}.clone()")
    else:
        b.step(f"{buf}[4:].copy_({buf}[:4])")
    b.step(f"print({buf}.sum().item(), {idx}.tolist())")
    intent = "overlap-write" if variant in ("shift-copy", "index-self") else "clean"
    return variant, intent


def zero_grad_missing(b: Builder) -> Tuple[str, str]:
    """optimizer.step() every iteration, zero_grad() never (silent: gradients accumulate), every
    iteration (clean), or every k iterations for accumulation (clean)."""
    D, O = 3, 2
    net = mlp_class(b, D, O)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = torch.optim.SGD({model}.parameters(), lr=0.01)")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    variant = pick(b.rng, ["never", "every-step", "set-to-none", "accumulate-k"], weights=[3, 2, 1, 2])
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y})")
    if variant == "accumulate-k":
        b.step(f"({loss} / 2).backward()")
        b.step(f"if {b.loop_var} % 2 == 1:\n    {opt}.step()\n    {opt}.zero_grad()")
        return variant, "clean"
    b.step(f"expected = [g.clone() for g in torch.autograd.grad({loss}, list({model}.parameters()), retain_graph=True)]")
    if variant == "every-step":
        b.step(f"{opt}.zero_grad()")
    elif variant == "set-to-none":
        b.step(f"for p in {model}.parameters():\n    p.grad = None")
    b.step(f"{loss}.backward()", mark="cause" if variant == "never" else None)
    b.step(f"if any(not torch.allclose(p.grad, e) for p, e in zip({model}.parameters(), expected)):\n"
           f"    print(\"MISMATCH: the gradient holds earlier iterations' too\")")
    b.step(f"{opt}.step()")
    return variant, "silent" if variant == "never" else "clean"


PATTERNS: Dict[str, Tuple[Pattern, float]] = {
    "loss-under-no-grad": (loss_under_no_grad, 3),
    "cut-loss": (cut_loss, 3),
    "nondiff-op": (nondiff_op, 2),
    "all-frozen": (all_frozen, 2),
    "nonscalar-backward": (nonscalar_backward, 2),
    "nonleaf-requires-grad": (nonleaf_requires_grad, 2),
    "nonleaf-grad": (nonleaf_grad, 2),
    "optimizer-params": (optimizer_params, 2),
    "unused-input": (unused_input, 2),
    "nograd-view": (nograd_view, 2),
    "detach-view": (detach_view, 1),
    "overlap-write": (overlap_write, 1),
    "zero-grad-missing": (zero_grad_missing, 2),
}
