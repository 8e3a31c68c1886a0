"""Small random programs for the gradient-flow rules (GW7xx): a model, a forward, a loss, a
backward and a step, with at most one gradient-flow construct injected — a hazard (the
forward under ``no_grad``, ``.item()`` re-wrapped, a frozen model, a per-sample loss, a
non-leaf weight, ...) or its safe look-alike (``no_grad`` for evaluation, ``.item()`` for
logging, a frozen backbone under a trainable head, ...).

Programs are labelled by running them under torch (tests/test_flow_programs.py), never by
what the generator meant: the label is what torch did. ``programs(seed, n)`` is
deterministic for a seed.
"""
from __future__ import annotations

import random
import textwrap
from typing import Callable, Dict, List, Tuple

HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"


class Prog:
    """Pieces of one program; ``render`` joins them."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.setup: List[str] = []
        self.helpers: List[str] = []
        self.body: List[str] = []  # the training step, at top level or inside a loop
        self.after: List[str] = []
        self.loop = rnd.random() < 0.4
        self.in_function = rnd.random() < 0.35
        self.device = rnd.random() < 0.3  # model and data moved with .to(device)
        self.batch = "batch" if rnd.random() < 0.25 else "8"  # a size the analysis cannot compute
        self.helper_loss = rnd.random() < 0.3  # the loss computed by a function of the file
        self.tag = "clean"

    def render(self) -> str:
        pre = []
        if self.batch == "batch":
            pre.append("import os\nbatch = int(os.environ.get('FLOWPROG_BATCH', '8'))")
        if self.device:
            pre.append("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')")
        lines = [HEADER] + pre + self.helpers + self.setup
        step = list(self.body)
        if self.loop:
            step = ["for it in range(2):"] + ["    " + x for x in step]
        if self.in_function:
            step = ["def train_step():"] + ["    " + x for x in step] + ["", "train_step()"]
        return "\n".join(lines + step + self.after) + "\n"


def _model(p: Prog) -> Tuple[str, str, str]:
    """Set up a model; returns (forward expression over `x`, params expression, target kind)."""
    r = p.rnd
    kind = r.choice(["linear", "mlp", "param", "module"])
    out_dim = r.choice([1, 3])
    if kind == "linear":
        p.setup.append(f"model = nn.Linear(4, {out_dim})")
        fwd, params = "model(x)", "model.parameters()"
    elif kind == "mlp":
        p.setup.append(f"model = nn.Sequential(nn.Linear(4, 8), nn.{r.choice(['ReLU', 'Tanh'])}(), nn.Linear(8, {out_dim}))")
        fwd, params = "model(x)", "model.parameters()"
    elif kind == "param":
        p.setup.append(f"w = torch.randn(4, {out_dim}, requires_grad=True)")
        p.setup.append(f"b = torch.zeros({out_dim}, requires_grad=True)")
        fwd, params = "x @ w + b", "[w, b]"
    else:
        p.helpers.append(textwrap.dedent(f"""
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(4, 8)
                    self.fc2 = nn.Linear(8, {out_dim})
                def forward(self, x):
                    h = torch.relu(self.fc1(x))
                    return self.fc2(h)
            """))
        p.setup.append("model = Net()")
        fwd, params = "model(x)", "model.parameters()"
    dev = ".to(device)" if p.device else ""
    if p.device and kind != "param":
        p.setup.append("model = model.to(device)")
    p.setup.append(f"x = torch.randn({p.batch}, 4){dev}")
    if out_dim == 3 and r.random() < 0.5:
        p.setup.append(f"y = torch.randint(0, 3, ({p.batch},)){dev}")
        target = "class"
    else:
        p.setup.append(f"y = torch.randn({p.batch}, {out_dim}){dev}")
        target = "reg"
    return fwd, params, target


def _loss(p: Prog, out: str, target: str, reduction: str = "mean") -> str:
    expr = _loss_expr(p, out, target, reduction)
    if p.helper_loss and "criterion" not in expr and out == "out":
        name = f"compute_loss{len(p.helpers)}"
        p.helpers.append(f"def {name}(pred, target):\n    return {expr.replace('out', 'pred').replace(', y', ', target').replace('- y', '- target')}\n")
        return f"{name}(out, y)"
    return expr


def _loss_expr(p: Prog, out: str, target: str, reduction: str = "mean") -> str:
    r = p.rnd
    if target == "class":
        if r.random() < 0.5:
            return f"F.cross_entropy({out}, y{'' if reduction == 'mean' else ', reduction=' + repr(reduction)})"
        p.setup.append(f"criterion = nn.CrossEntropyLoss({'' if reduction == 'mean' else 'reduction=' + repr(reduction)})")
        return f"criterion({out}, y)"
    choice = r.choice(["mse", "manual", "l1"])
    if choice == "mse":
        return f"F.mse_loss({out}, y{'' if reduction == 'mean' else ', reduction=' + repr(reduction)})"
    if choice == "l1":
        p.setup.append(f"criterion = nn.L1Loss({'' if reduction == 'mean' else 'reduction=' + repr(reduction)})")
        return f"criterion({out}, y)"
    return f"(({out} - y) ** 2){'.mean()' if reduction == 'mean' else ('.sum()' if reduction == 'sum' else '')}"


def _optimizer(p: Prog, params: str) -> None:
    p.setup.append(f"opt = torch.optim.{p.rnd.choice(['SGD', 'Adam'])}({params}, lr=0.01)")


def _standard(p: Prog, fwd: str, target: str, params: str, *, pre: List[str] = (), out_line: str = "",
              loss_line: str = "", zero: bool = True) -> None:
    _optimizer(p, params)
    if zero:
        p.body.append("opt.zero_grad()")
    p.body.extend(pre)
    p.body.append(out_line or f"out = {fwd}")
    p.body.append(loss_line or f"loss = {_loss(p, 'out', target)}")
    p.body.append("loss.backward()")
    p.body.append("opt.step()")


# --------------------------------------------------------------------------- constructs
def c_clean(p: Prog) -> None:
    fwd, params, target = _model(p)
    _standard(p, fwd, target, params)


def c_nograd_forward(p: Prog) -> None:
    p.tag = "nograd"
    fwd, params, target = _model(p)
    _optimizer(p, params)
    p.body += ["opt.zero_grad()", "with torch.no_grad():", f"    out = {fwd}",
               f"loss = {_loss(p, 'out', target)}", "loss.backward()", "opt.step()"]


def c_nograd_eval_safe(p: Prog) -> None:
    p.tag = "nograd-safe"
    fwd, params, target = _model(p)
    _standard(p, fwd, target, params)
    p.after += ["with torch.no_grad():", f"    val = {fwd}", f"    val_loss = {_loss(p, 'val', target)}.item()",
                "print(val_loss)"]


def c_nograd_decorator(p: Prog) -> None:
    p.tag = "nograd"
    fwd, params, target = _model(p)
    p.helpers.append(f"@torch.no_grad()\ndef predict(x):\n    return {fwd}\n")
    _standard(p, fwd, target, params, out_line="out = predict(x)")


def c_set_grad_enabled(p: Prog) -> None:
    p.tag = "nograd"
    fwd, params, target = _model(p)
    p.setup.insert(0, "torch.set_grad_enabled(False)")
    _standard(p, fwd, target, params)


def c_post_ops_after_cut(p: Prog) -> None:
    p.tag = "detach"
    fwd, params, target = _model(p)
    cut = p.rnd.choice([".detach()", ".data"])
    _standard(p, fwd, target, params, out_line=f"out = {fwd}",
              loss_line=f"loss = {_loss(p, 'out' + cut, target)}\nloss = loss * 0.5 + 0.01")


def c_inference_mode(p: Prog) -> None:
    p.tag = "nograd"
    fwd, params, target = _model(p)
    _optimizer(p, params)
    p.body += ["with torch.inference_mode():", f"    out = {fwd}", f"    loss = {_loss(p, 'out', target)}",
               "loss.backward()"]


def c_detach(p: Prog) -> None:
    p.tag = "detach"
    fwd, params, target = _model(p)
    where = p.rnd.choice(["out", "loss", "data"])
    if where == "out":
        _standard(p, fwd, target, params, out_line=f"out = {fwd}.detach()")
    elif where == "data":
        _standard(p, fwd, target, params, out_line=f"out = {fwd}.data")
    else:
        _standard(p, fwd, target, params, loss_line=f"loss = {_loss(p, 'out', target)}.detach()")


def c_detach_target_safe(p: Prog) -> None:
    p.tag = "detach-safe"
    fwd, params, target = _model(p)
    if target == "class":
        _standard(p, fwd, target, params, pre=[f"ref = {fwd}.detach()"],
                  loss_line=f"loss = {_loss(p, 'out', target)} + 0.1 * ((out - ref) ** 2).mean()")
    else:
        _standard(p, fwd, target, params, pre=[f"ref = {fwd}.detach()"],
                  loss_line="loss = ((out - ref * 0.5 - y) ** 2).mean()")


def c_item_rewrap(p: Prog) -> None:
    p.tag = "item"
    fwd, params, target = _model(p)
    form = p.rnd.choice(["tensor", "as_tensor", "list", "float"])
    lossx = _loss(p, "out", target)
    if form == "tensor":
        line = f"loss = torch.tensor({lossx}.item())"
    elif form == "as_tensor":
        line = f"loss = torch.as_tensor({lossx}.item())"
    elif form == "float":
        line = f"loss = torch.tensor(float({lossx}))"
    else:
        line = f"loss = torch.tensor([{lossx}.item()]).sum()"
    _standard(p, fwd, target, params, loss_line=line)


def c_item_log_safe(p: Prog) -> None:
    p.tag = "item-safe"
    fwd, params, target = _model(p)
    _standard(p, fwd, target, params)
    p.body += ["total = loss.item()", "print(f'{total:.3f}')"]


def c_item_backward(p: Prog) -> None:
    p.tag = "item-number"
    fwd, params, target = _model(p)
    _standard(p, fwd, target, params, loss_line=f"loss = {_loss(p, 'out', target)}.item()")


def c_nondiff(p: Prog) -> None:
    p.tag = "nondiff"
    fwd, params, target = _model(p)
    op = p.rnd.choice(["argmax", "long", "cmp"])
    _optimizer(p, params)
    if op == "argmax":
        p.body += [f"pred = {fwd}.argmax(dim=1)", "loss = (pred.float() - 1.0).pow(2).mean()"]
    elif op == "long":
        p.body += [f"pred = {fwd}.long()", "loss = pred.float().mean()"]
    else:
        p.body += [f"pred = ({fwd} > 0)", "loss = pred.float().mean()"]
    p.body += ["loss.backward()", "opt.step()"]


def c_nondiff_safe(p: Prog) -> None:
    p.tag = "nondiff-safe"
    fwd, params, target = _model(p)
    _standard(p, fwd, target, params)
    p.body += ["acc = (out.argmax(dim=1) == 0).float().mean()", "print(acc.item())"]


def c_frozen(p: Prog) -> None:
    p.tag = "frozen"
    fwd, params, target = _model(p)
    how = p.rnd.choice(["loop", "method", "attr"])
    if "w, b" in params:
        p.setup += ["w.requires_grad_(False)", "b.requires_grad = False"]
    elif how == "loop":
        p.setup += ["for prm in model.parameters():", "    prm.requires_grad = False"]
    elif how == "method":
        p.setup.append("model.requires_grad_(False)")
    else:
        p.setup += ["for name, prm in model.named_parameters():", "    prm.requires_grad_(False)"]
    p.body += [f"out = {fwd}", f"loss = {_loss(p, 'out', target)}", "loss.backward()"]


def c_frozen_backbone_safe(p: Prog) -> None:
    p.tag = "frozen-safe"
    p.setup += ["backbone = nn.Linear(4, 8)", "head = nn.Linear(8, 3)", "backbone.requires_grad_(False)",
                "x = torch.randn(8, 4)", "y = torch.randint(0, 3, (8,))",
                "opt = torch.optim.SGD(head.parameters(), lr=0.1)"]
    p.body += ["opt.zero_grad()", "loss = F.cross_entropy(head(torch.relu(backbone(x))), y)", "loss.backward()",
               "opt.step()"]


def c_nonscalar(p: Prog) -> None:
    p.tag = "nonscalar"
    fwd, params, target = _model(p)
    reduction = "none"
    _standard(p, fwd, target, params, loss_line=f"loss = {_loss(p, 'out', target, reduction)}")


def c_nonscalar_safe(p: Prog) -> None:
    p.tag = "nonscalar-safe"
    fwd, params, target = _model(p)
    form = p.rnd.choice(["mean", "sum", "grad"])
    _optimizer(p, params)
    p.body += ["opt.zero_grad()", f"out = {fwd}", f"per = {_loss(p, 'out', target, 'none')}"]
    if form == "mean":
        p.body.append("per.mean().backward()")
    elif form == "sum":
        p.body.append("per.sum().backward()")
    else:
        p.body.append("per.backward(gradient=torch.ones_like(per))")
    p.body.append("opt.step()")


def c_nonleaf_weight(p: Prog) -> None:
    p.tag = "nonleaf"
    op = p.rnd.choice(["* 0.01", ".double()", "+ 0.0"])
    use = p.rnd.choice(["grad", "opt"])
    p.setup += [f"w = torch.randn(4, 1, requires_grad=True){op}", "x = torch.randn(8, 4)"]
    if ".double()" in op:
        p.setup[-1] = "x = torch.randn(8, 4, dtype=torch.float64)"
    if use == "opt":
        p.setup.append("opt = torch.optim.SGD([w], lr=0.1)")
        p.body += ["loss = (x @ w).pow(2).mean()", "loss.backward()", "opt.step()"]
    else:
        p.body += ["loss = (x @ w).pow(2).mean()", "loss.backward()", "print(w.grad)"]


def c_leaf_weight_safe(p: Prog) -> None:
    p.tag = "nonleaf-safe"
    form = p.rnd.choice(["requires_grad_", "retain"])
    if form == "requires_grad_":
        p.setup += ["w = (torch.randn(4, 1) * 0.01).requires_grad_()"]
    else:
        p.setup += ["w = torch.randn(4, 1, requires_grad=True) * 0.01", "w.retain_grad()"]
    p.setup += ["x = torch.randn(8, 4)"]
    p.body += ["loss = (x @ w).pow(2).mean()", "loss.backward()", "print(w.grad)"]


def c_rg_nonleaf(p: Prog) -> None:
    p.tag = "rg-nonleaf"
    fwd, params, target = _model(p)
    p.setup.append(f"ref = {fwd}")
    p.setup.append(p.rnd.choice(["ref.requires_grad = False", "ref.requires_grad_(False)"]))
    p.body.append("print(ref.shape)")


def c_grad_unused(p: Prog) -> None:
    p.tag = "grad-unused"
    p.setup += ["x = torch.randn(3, requires_grad=True)", "z = torch.randn(3, requires_grad=True)"]
    form = p.rnd.choice(["unused", "norg", "recreated"])
    if form == "unused":
        p.body += ["y = (x * 2).sum()", "g = torch.autograd.grad(y, [x, z])"]
    elif form == "norg":
        p.setup += ["c = torch.randn(3)"]
        p.body += ["y = (x * c).sum()", "g = torch.autograd.grad(y, [c])"]
    else:
        p.body += ["y = (x ** 2).sum()", "x2 = x.detach().requires_grad_()", "g = torch.autograd.grad(y, x2)"]


def c_grad_used_safe(p: Prog) -> None:
    p.tag = "grad-unused-safe"
    p.setup += ["x = torch.randn(3, requires_grad=True)", "z = torch.randn(3, requires_grad=True)"]
    form = p.rnd.choice(["used", "allow"])
    if form == "used":
        p.body += ["y = (x * z).sum()", "g = torch.autograd.grad(y, [x, z])"]
    else:
        p.body += ["y = (x * 2).sum()", "g = torch.autograd.grad(y, [x, z], allow_unused=True)"]


def c_nograd_view(p: Prog) -> None:
    p.tag = "nograd-view"
    p.setup += ["w = torch.randn(4, 3, requires_grad=True)", "h = w * 1.0"]
    p.body += ["with torch.no_grad():", "    row = h[0]", p.rnd.choice(["row.mul_(2)", "row += 1", "row[0] = 0.0"]),
               "h.sum().backward()"]


def c_detach_view(p: Prog) -> None:
    p.tag = "detach-view"
    p.setup += ["seq = torch.randn(2, 5, 4, requires_grad=True) * 1.0"]
    p.body += [p.rnd.choice(["h = seq[:, -1]", "h = seq.transpose(0, 1)", "h = seq.view(10, 4)"]), "h.detach_()"]


def c_overlap(p: Prog) -> None:
    p.tag = "overlap"
    form = p.rnd.choice(["shift", "copy_t", "selfindex"])
    if form == "shift":
        p.setup += ["buf = torch.zeros(6)"]
        p.body += ["buf[1:] = buf[:-1]"]
    elif form == "copy_t":
        p.setup += ["m = torch.randn(3, 3)"]
        p.body += ["m.copy_(m.t())"]
    else:
        p.setup += ["perm = torch.tensor([2, 0, 1])"]
        p.body += ["perm[perm] = 0"]


def c_overlap_safe(p: Prog) -> None:
    p.tag = "overlap-safe"
    p.setup += ["buf = torch.zeros(6)"]
    p.body += [p.rnd.choice(["buf[1:] = buf[:-1].clone()", "buf[:3] = buf[3:]", "buf.copy_(buf.flip(0))"])]


def c_no_zero(p: Prog) -> None:
    p.tag = "no-zero"
    fwd, params, target = _model(p)
    p.loop = True
    p.in_function = False
    _optimizer(p, params)
    if p.rnd.random() < 0.3:
        p.body.append("opt.zero_grad()")
    # the program checks itself: is .grad after backward the gradient of this loss alone?
    p.body += [f"out = {fwd}", f"loss = {_loss(p, 'out', target)}",
               "exp = torch.autograd.grad(loss, opt.param_groups[0]['params'], retain_graph=True)",
               "loss.backward()",
               "if not all(torch.allclose(e, q.grad) for e, q in zip(exp, opt.param_groups[0]['params'])):",
               "    print('MISMATCH')",
               "opt.step()"]


CONSTRUCTS: Dict[str, Callable[[Prog], None]] = {
    name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("c_") and callable(fn)}


def programs(seed: int, n: int) -> List[Tuple[str, str, str]]:
    """``n`` programs: (name, construct, source)."""
    rnd = random.Random(seed)
    names = sorted(CONSTRUCTS)
    out = []
    for i in range(n):
        construct = names[i % len(names)]
        p = Prog(random.Random(rnd.random()))
        CONSTRUCTS[construct](p)
        out.append((f"p{i:04d}_{construct}", construct, p.render()))
    return out
