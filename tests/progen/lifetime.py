"""Graph-lifetime vocabulary (issue 9): carried state, containers, attributes, helpers, two models,
``autograd.grad``, optimizer steps between backwards, in-place writes, views, ``.detach()``.

Each pattern writes one program into a :class:`Builder` and returns ``(variant, intent)``: the
intent is the torch error class the generator expects (see ``oracle.ERROR_CLASSES``) or
``"clean"``. About half of the variants are clean look-alikes (the detach in the right place,
``retain_graph`` when nothing changed in between, ``no_grad`` for evaluation only): those
measure false alarms. torch decides; the intent is checked against it (``oracle``).
"""
from __future__ import annotations

from typing import Callable, Dict, Tuple

from .builder import Builder, data_lines, logging_noise, maybe, mlp_class, pick

Pattern = Callable[[Builder], Tuple[str, str]]


def _opt(b: Builder, params: str) -> str:
    kind = pick(b.rng, ["SGD", "Adam", "RMSprop"])
    lr = pick(b.rng, ["0.1", "0.01", "1e-3"])
    return f"torch.optim.{kind}({params}, lr={lr})"


def _train_tail(b: Builder, opt: str, loss: str, retain: bool = False) -> None:
    b.step(f"{opt}.zero_grad()")
    b.step(f"{loss}.backward({'retain_graph=True' if retain else ''})")
    # with retain_graph, the step's in-place update of saved weights is what the next backward
    # trips on (the version-counter error): a fair line to flag besides the store
    b.step(f"{opt}.step()", mark="cause" if retain else None)


# --- carried state -----------------------------------------------------------------------------


def carried_state(b: Builder) -> Tuple[str, str]:
    """A recurrent state carried from one iteration into the next (local, dict, list, holder)."""
    D, H, B = 3, 4, 2
    cell_cls = b.cls("cls", "cell")
    act = pick(b.rng, ["torch.tanh", "torch.sigmoid"])
    b.defs(
        f"class {cell_cls}(nn.Module):\n"
        f"    def __init__(self, din={D}, dh={H}):\n"
        f"        super().__init__()\n"
        f"        self.inp = nn.Linear(din, dh)\n"
        f"        self.rec = nn.Linear(dh, dh)\n"
        f"\n"
        f"    def forward(self, x, h):\n"
        f"        return {act}(self.inp(x) + self.rec(h))"
    )
    cell, opt = b.var("model"), b.var("opt")
    b.setup(f"{cell} = {cell_cls}()")
    b.setup(f"{opt} = {_opt(b, f'{cell}.parameters()')}")
    store = pick(b.rng, ["plain", "dict", "list", "holder"])
    init = f"torch.zeros({B}, {H})"
    if store == "plain":
        h = b.var("h")
        b.setup(f"{h} = {init}")
        get, put = h, (lambda v: f"{h} = {v}")
    elif store == "dict":
        st = b.var("state", "statedict")
        key = pick(b.rng, ["h", "hidden", "rnn"])
        b.setup(f"{st} = {{\"{key}\": {init}, \"steps\": 0}}")
        get, put = f"{st}[\"{key}\"]", (lambda v: f"{st}[\"{key}\"] = {v}")
    elif store == "list":
        hist = b.var("history", "hist")
        b.setup(f"{hist} = [{init}]")
        get, put = f"{hist}[-1]", (lambda v: f"{hist}.append({v})")
    else:
        holder_cls = pick(b.rng, ["StateHolder", "Carry", "RNNState"])
        b.defs(
            f"class {holder_cls}:\n"
            f"    def __init__(self, value):\n"
            f"        self.value = value"
        )
        holder = b.var("holder")
        b.setup(f"{holder} = {holder_cls}({init})")
        get, put = f"{holder}.value", (lambda v: f"{holder}.value = {v}")
    variant = pick(b.rng, ["no-detach", "detach-top", "detach-after", "retain", "reinit"],
                   weights=[3, 2, 2, 1, 1])
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn({B}, {D})")
    if variant == "detach-top":
        b.step(put(f"{get}.detach()"))
    if variant == "reinit":
        b.step(put(init))
    if variant == "detach-after":
        new = b.local("out")
        b.step(f"{new} = {cell}({x}, {get})")
        b.step(f"{loss} = {new}.pow(2).mean()")
        _train_tail(b, opt, loss)
        b.step(put(f"{new}.detach()"))
        return variant, "clean"
    b.step(put(f"{cell}({x}, {get})"), mark="cause" if variant in ("no-detach", "retain") else None)
    b.step(f"{loss} = {get}.pow(2).mean()")
    noise = logging_noise(b, loss)
    if noise:
        b.step(noise)
    _train_tail(b, opt, loss, retain=variant == "retain")
    if variant == "retain":
        b.iterations = 4
        return variant, "version-counter"
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def running_stat(b: Builder) -> Tuple[str, str]:
    """Hand-written running statistics kept in a module attribute or a tracker object."""
    D, H = 3, 4
    where = pick(b.rng, ["module", "tracker"])
    variant = pick(b.rng, ["no-detach", "detach", "no-grad-inplace", "no-grad-rebind"], weights=[3, 2, 1, 1])
    m = pick(b.rng, ["0.9", "0.99", "0.5"])
    if where == "module":
        cls = b.cls("cls", "normcls")
        stat = pick(b.rng, ["running_mean", "ema", "center", "avg_feat"])
        if variant == "no-grad-inplace":
            init = f"        self.register_buffer(\"{stat}\", torch.zeros(d))"
            upd = (f"        with torch.no_grad():\n"
                   f"            self.{stat}.mul_(self.momentum).add_((1 - self.momentum) * feat.mean(0))")
        elif variant == "no-grad-rebind":
            init = f"        self.{stat} = torch.zeros(d)"
            upd = (f"        with torch.no_grad():\n"
                   f"            self.{stat} = self.momentum * self.{stat} + (1 - self.momentum) * feat.mean(0)")
        else:
            init = f"        self.{stat} = torch.zeros(d)"
            tail = ".detach()" if variant == "detach" else ""
            upd = f"        self.{stat} = self.momentum * self.{stat} + (1 - self.momentum) * feat.mean(0){tail}"
        b.defs(
            f"class {cls}(nn.Module):\n"
            f"    def __init__(self, din={D}, d={H}, momentum={m}):\n"
            f"        super().__init__()\n"
            f"        self.lin = nn.Linear(din, d)\n"
            f"        self.momentum = momentum\n"
            f"{init}\n"
            f"\n"
            f"    def forward(self, x):\n"
            f"        feat = torch.relu(self.lin(x))"
        )
        b.add("defs", upd, mark="cause" if variant == "no-detach" else None)
        b.add("defs", f"        return feat - self.{stat}")
        model, opt = b.var("model"), b.var("opt")
        b.setup(f"{model} = {cls}()")
        b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
        x, loss = b.local("x"), b.local("loss")
        b.step(f"{x} = torch.randn(4, {D})")
        b.step(f"{loss} = {model}({x}).pow(2).mean()")
        _train_tail(b, opt, loss)
    else:
        tcls = pick(b.rng, ["EMA", "RunningAverage", "Baseline", "MeanTracker"])
        # the fix may also go inside the tracker (store a detached value): fair lines too
        inner = "cause" if variant == "no-detach" else None
        b.defs(
            f"class {tcls}:\n"
            f"    def __init__(self, momentum={m}):\n"
            f"        self.momentum = momentum\n"
            f"        self.value = None\n"
            f"\n"
            f"    def update(self, v):\n"
            f"        if self.value is None:"
        )
        b.add("defs", "            self.value = v", mark=inner)
        b.add("defs", "        else:")
        b.add("defs", "            self.value = self.momentum * self.value + (1 - self.momentum) * v", mark=inner)
        b.add("defs", "        return self.value")
        net = mlp_class(b, D, H)
        model, opt, tr = b.var("model"), b.var("opt"), b.var("tracker")
        b.setup(f"{model} = {net}()")
        b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
        b.setup(f"{tr} = {tcls}()")
        x, out, loss = b.local("x"), b.local("out"), b.local("loss")
        b.step(f"{x} = torch.randn(4, {D})")
        b.step(f"{out} = {model}({x})")
        if variant == "no-detach":
            b.step(f"{tr}.update({out}.mean(0))", mark="cause")
        elif variant == "detach":
            b.step(f"{tr}.update({out}.mean(0).detach())")
        else:
            b.step(f"with torch.no_grad():\n    {tr}.update({out}.mean(0))")
        b.step(f"{loss} = ({out} - {tr}.value).pow(2).mean()")
        _train_tail(b, opt, loss)
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def accumulated_loss(b: Builder) -> Tuple[str, str]:
    """A running total of losses: backwarded every step (error) or only logged / backwarded once."""
    D, O = 3, 2
    net = mlp_class(b, D, O)
    model, opt, total = b.var("model"), b.var("opt"), b.var("total", "total")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    start = pick(b.rng, ["0.0", "0", "torch.zeros(())", "torch.tensor(0.0)"])
    b.setup(f"{total} = {start}")
    variant = pick(b.rng, ["backward-total", "log-item", "log-detach", "log-graph", "accumulate-once"],
                   weights=[3, 2, 1, 1, 2])
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    crit = pick(b.rng, ["nn.functional.mse_loss({o}, {y})", "(({o} - {y}) ** 2).mean()", "nn.functional.l1_loss({o}, {y})"])
    b.step(f"{loss} = {crit.format(o=f'{model}({x})', y=y)}")
    if variant == "backward-total":
        aug = maybe(b.rng)
        b.step(f"{total} += {loss}" if aug else f"{total} = {total} + {loss}", mark="cause")
        b.step(f"{opt}.zero_grad()")
        b.step(f"{total}.backward()")
        b.step(f"{opt}.step()")
        return variant, "freed-graph"
    if variant == "accumulate-once":
        b.step(f"{total} = {total} + {loss}")
        b.after(f"{opt}.zero_grad()")
        b.after(f"({total} / 3).backward()" if maybe(b.rng) else f"{total}.backward()")
        b.after(f"{opt}.step()")
        return variant, "clean"
    if variant == "log-item":
        b.step(f"{total} += {loss}.item()")
    elif variant == "log-detach":
        b.step(f"{total} = {total} + {loss}.detach()")
    else:
        b.step(f"{total} = {total} + {loss}")
    _train_tail(b, opt, loss)
    b.after(f"print(\"mean loss\", float({total}) / 3)")
    return variant, "clean"


def replay_memory(b: Builder) -> Tuple[str, str]:
    """A memory of (log_prob, reward) tuples sampled in later updates (REINFORCE / replay)."""
    S, A = 4, 3
    b.need("import torch.nn.functional as F")
    net = mlp_class(b, S, A, act="torch.tanh")
    policy, opt = b.var("model", "policy"), b.var("opt")
    mem_kind = pick(b.rng, ["list", "class"])
    b.setup(f"{policy} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{policy}.parameters()')}")
    variant = pick(b.rng, ["window", "no-clear", "clear", "recompute"], weights=[2, 2, 2, 2])
    if mem_kind == "class":
        mcls = pick(b.rng, ["ReplayMemory", "Buffer", "EpisodeMemory", "Rollout"])
        b.defs(
            f"class {mcls}:\n"
            f"    def __init__(self):\n"
            f"        self.items = []\n"
            f"\n"
            f"    def push(self, *item):\n"
            f"        self.items.append(item)\n"
            f"\n"
            f"    def last(self, k):\n"
            f"        return self.items[-k:]\n"
            f"\n"
            f"    def clear(self):\n"
            f"        self.items = []"
        )
        mem = b.var("memory", "mem")
        b.setup(f"{mem} = {mcls}()")
        push = lambda item: f"{mem}.push({item})"  # noqa: E731
        last = lambda k: f"{mem}.last({k})"  # noqa: E731
        clear = f"{mem}.clear()"
    else:
        mem = b.var("memory", "mem")
        b.setup(f"{mem} = []")
        push = lambda item: f"{mem}.append(({item}))"  # noqa: E731
        last = lambda k: f"{mem}[-{k}:]"  # noqa: E731
        clear = f"{mem}.clear()" if maybe(b.rng) else f"del {mem}[:]"
    s, a, lp, r, loss = b.local("s", "s"), b.local("a", "a"), b.local("logp", "lp"), b.local("r", "r"), b.local("loss")
    b.step(f"{s} = torch.randn({S})")
    b.step(f"dist = torch.distributions.Categorical(logits={policy}({s}))")
    b.step(f"{a} = dist.sample()")
    b.step(f"{r} = float(({s}.sum() > 0).item())")
    if variant == "recompute":
        b.step(push(f"{s}, {a}, {r}"))
        b.step(f"batch = {last(2)}")
        b.step(f"{loss} = -sum(F.log_softmax({policy}(st), -1)[act] * rew for st, act, rew in batch)")
    else:
        b.step(f"{lp} = dist.log_prob({a})")
        b.step(push(f"{lp}, {r}"), mark="cause" if variant in ("window", "no-clear") else None)
        if variant == "window":
            b.step(f"batch = {last(2)}")
        else:
            b.step(f"batch = {last(10)}")
        b.step(f"{loss} = -torch.stack([l * w for l, w in batch]).sum()")
    b.step(f"{opt}.zero_grad()")
    b.step(f"{loss}.backward()")
    b.step(f"{opt}.step()")
    if variant == "clear":
        b.step(clear)
    if variant in ("window", "no-clear"):
        return variant, "freed-graph"
    return variant, "clean"


def helper_once(b: Builder) -> Tuple[str, str]:
    """A helper returns a graph-carrying value (advantages from a critic) computed once and reused
    in every epoch."""
    S, A = 4, 3
    b.need("import torch.nn.functional as F")
    pnet = mlp_class(b, S, A, key="pcls")
    cnet = mlp_class(b, S, 1, key="ccls")
    helper = pick(b.rng, ["compute_advantages", "advantages", "estimate_advantage", "gae"])
    # retain / inside-no-detach run without an error, but the policy loss also trains the critic
    # through the advantage (a silent hazard): a self-check prints MISMATCH when the critic,
    # which no optimizer here updates, received a gradient
    variant = pick(b.rng, ["no-detach", "detach", "no-grad", "inside", "inside-no-detach", "retain"],
                   weights=[3, 1, 1, 1, 1, 1])
    ret = "returns - values"
    if variant == "detach":
        body = (f"    values = critic(states).squeeze(-1)\n"
                f"    return ({ret}).detach()")
    elif variant == "no-grad":
        body = (f"    with torch.no_grad():\n"
                f"        values = critic(states).squeeze(-1)\n"
                f"    return {ret}")
    else:
        body = (f"    values = critic(states).squeeze(-1)\n"
                f"    return {ret}")
    b.defs(f"def {helper}(critic, states, returns):\n{body}")
    policy, critic, opt = b.var("model", "policy"), b.var("critic"), b.var("opt")
    states, rets, adv = b.var("states"), b.var("returns", "rets"), b.var("adv", "adv")
    b.setup(f"{policy} = {pnet}()")
    b.setup(f"{critic} = {cnet}()")
    b.setup(f"{opt} = {_opt(b, f'{policy}.parameters()')}")
    b.setup(f"{states} = torch.randn(5, {S})")
    b.setup(f"{rets} = torch.randn(5)")
    actions = b.var("actions")
    b.setup(f"{actions} = torch.randint(0, {A}, (5,))")
    loss = b.local("loss")
    silent = variant in ("inside-no-detach", "retain")
    if variant == "inside":
        b.step(f"{adv} = {helper}({critic}, {states}, {rets}).detach()")
    elif variant == "inside-no-detach":
        b.step(f"{adv} = {helper}({critic}, {states}, {rets})", mark="cause")
    else:
        b.setup(f"{adv} = {helper}({critic}, {states}, {rets})",
                mark="cause" if variant in ("no-detach", "retain") else None)
    b.step(f"logp = F.log_softmax({policy}({states}), -1).gather(1, {actions}[:, None]).squeeze(1)")
    # detaching here (in the policy loss) is as fair a fix as in the helper or at its call
    b.step(f"{loss} = -(logp * {adv}).mean()", mark="cause" if variant != "detach" and variant != "no-grad"
           and variant != "inside" else None)
    b.step(f"{opt}.zero_grad()")
    b.step(f"{loss}.backward({'retain_graph=True' if variant == 'retain' else ''})")
    b.step(f"{opt}.step()")
    if silent:
        b.after(f"if any(p.grad is not None and p.grad.abs().sum() > 0 for p in {critic}.parameters()):\n"
                f"    print(\"MISMATCH: the policy loss trained the critic\")")
        return variant, "silent"
    if variant == "no-detach":
        return variant, "freed-graph"
    return variant, "clean"


def forward_outside(b: Builder) -> Tuple[str, str]:
    """The forward computed once before the loop, the backward inside it."""
    D, O = 3, 2
    net = mlp_class(b, D, O)
    model, opt = b.var("model"), b.var("opt")
    x, y, out = b.var("x"), b.var("y"), b.var("out")
    b.setup(f"{model} = {net}()")
    variant = pick(b.rng, ["outside", "outside-retain", "inside", "frozen-features"], weights=[3, 1, 2, 2])
    b.setup(f"{x}, {y} = torch.randn(6, {D}), torch.randn(6, {O})")
    loss = b.local("loss")
    if variant == "frozen-features":
        head_cls = b.cls("cls", "headcls")
        b.defs(f"class {head_cls}(nn.Module):\n"
               f"    def __init__(self):\n"
               f"        super().__init__()\n"
               f"        self.fc = nn.Linear({O}, 1)\n"
               f"\n"
               f"    def forward(self, z):\n"
               f"        return self.fc(z)")
        head = b.var("head")
        b.setup(f"{head} = {head_cls}()")
        b.setup(f"{opt} = {_opt(b, f'{head}.parameters()')}")
        if maybe(b.rng):
            b.setup(f"with torch.no_grad():\n    {out} = {model}({x})")
        else:
            b.setup(f"{out} = {model}({x}).detach()")
        b.step(f"{loss} = {head}({out}).pow(2).mean()")
        _train_tail(b, opt, loss)
        return variant, "clean"
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    if variant == "inside":
        b.step(f"{out} = {model}({x})")
    else:
        b.setup(f"{out} = {model}({x})", mark="cause")
    b.step(f"{loss} = nn.functional.mse_loss({out}, {y})")
    _train_tail(b, opt, loss, retain=variant == "outside-retain")
    if variant == "outside":
        return variant, "freed-graph"
    if variant == "outside-retain":
        return variant, "version-counter"
    return variant, "clean"


def two_backwards(b: Builder) -> Tuple[str, str]:
    """Two losses over one forward: two backwards, with or without retain_graph, a step between."""
    D, O = 3, 2
    net = mlp_class(b, D, O)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, y, out = b.local("x"), b.local("y"), b.local("out")
    l1, l2 = b.local("loss", "l1"), b.local("aux", "l2")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{out} = {model}({x})")
    b.step(f"{l1} = nn.functional.mse_loss({out}, {y})")
    b.step(f"{l2} = {out}.abs().mean()" if maybe(b.rng) else f"{l2} = ({out} ** 2).sum() * 0.01")
    b.step(f"{opt}.zero_grad()")
    variant = pick(b.rng, ["twice", "retain", "retain-step", "sum", "step-then-fresh"], weights=[3, 2, 2, 2, 1])
    if variant == "twice":
        b.step(f"{l1}.backward()", mark="cause")
        b.step(f"{l2}.backward()")
        b.step(f"{opt}.step()")
        return variant, "freed-graph"
    if variant == "retain":
        b.step(f"{l1}.backward(retain_graph=True)")
        b.step(f"{l2}.backward()")
        b.step(f"{opt}.step()")
        return variant, "clean"
    if variant == "retain-step":
        b.step(f"{l1}.backward(retain_graph=True)")
        b.step(f"{opt}.step()", mark="cause")
        b.step(f"{l2}.backward()")
        return variant, "version-counter"
    if variant == "sum":
        b.step(f"({l1} + {l2}).backward()")
        b.step(f"{opt}.step()")
        return variant, "clean"
    b.step(f"{l1}.backward()")
    b.step(f"{opt}.step()")
    b.step(f"{opt}.zero_grad()")
    b.step(f"{l2} = {model}({x}).abs().mean()")
    b.step(f"{l2}.backward()")
    b.step(f"{opt}.step()")
    return variant, "clean"


def gan(b: Builder) -> Tuple[str, str]:
    """Generator and discriminator, two optimizers: detach the fake for D's step or not."""
    Z, X = 3, 4
    b.need("import torch.nn.functional as F")
    gcls = mlp_class(b, Z, X, key="gcls")
    dcls = mlp_class(b, X, 1, act="torch.relu", key="dcls")
    G, D = b.var("gen", "G"), b.var("disc", "D")
    og, od = b.var("opt_g", "og"), b.var("opt_d", "od")
    b.setup(f"{G} = {gcls}()")
    b.setup(f"{D} = {dcls}()")
    b.setup(f"{og} = {_opt(b, f'{G}.parameters()')}")
    b.setup(f"{od} = {_opt(b, f'{D}.parameters()')}")
    real, z, fake = b.local("real"), b.local("z"), b.local("fake")
    ld, lg = b.local("loss_d", "ld"), b.local("loss_g", "lg")
    crit = pick(b.rng, ["bce", "mse"])
    ones, zeros = b.var("ones", "ones"), b.var("zeros", "zeros")
    b.setup(f"{ones}, {zeros} = torch.ones(4, 1), torch.zeros(4, 1)")

    def loss(pred: str, target: str) -> str:
        t = ones if target == "ones" else zeros
        return f"F.binary_cross_entropy_with_logits({pred}, {t})" if crit == "bce" else f"F.mse_loss({pred}, {t})"

    b.step(f"{real} = torch.randn(4, {X})")
    b.step(f"{z} = torch.randn(4, {Z})")
    b.step(f"{fake} = {G}({z})")
    variant = pick(b.rng, ["no-detach", "detach", "retain-reuse", "g-first"], weights=[3, 3, 2, 1])
    if variant == "g-first":
        b.step(f"{lg} = {loss(f'{D}({fake})', 'ones')}")
        b.step(f"{og}.zero_grad()")
        b.step(f"{lg}.backward()")
        b.step(f"{og}.step()")
        b.step(f"{ld} = {loss(f'{D}({real})', 'ones')} + {loss(f'{D}({fake}.detach())', 'zeros')}")
        b.step(f"{od}.zero_grad()")
        b.step(f"{ld}.backward()")
        b.step(f"{od}.step()")
        return variant, "clean"
    if variant == "retain-reuse":
        dfake = b.local("d_fake")
        b.step(f"{dfake} = {D}({fake})")
        b.step(f"{ld} = {loss(f'{D}({real})', 'ones')} + {loss(dfake, 'zeros')}")
        b.step(f"{od}.zero_grad()")
        b.step(f"{ld}.backward(retain_graph=True)")
        b.step(f"{od}.step()", mark="cause")
        b.step(f"{lg} = {loss(dfake, 'ones')}")
        b.step(f"{og}.zero_grad()")
        b.step(f"{lg}.backward()")
        b.step(f"{og}.step()")
        return variant, "version-counter"
    arg = f"{fake}.detach()" if variant == "detach" else fake
    b.step(f"{ld} = {loss(f'{D}({real})', 'ones')} + {loss(f'{D}({arg})', 'zeros')}",
           mark="cause" if variant == "no-detach" else None)
    b.step(f"{od}.zero_grad()")
    b.step(f"{ld}.backward()")
    b.step(f"{od}.step()")
    b.step(f"{lg} = {loss(f'{D}({fake})', 'ones')}")
    b.step(f"{og}.zero_grad()")
    b.step(f"{lg}.backward()")
    b.step(f"{og}.step()")
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def actor_critic(b: Builder) -> Tuple[str, str]:
    """A critic's value inside the actor's advantage: detached, or backwarded twice."""
    S, A = 4, 3
    b.need("import torch.nn.functional as F")
    pnet = mlp_class(b, S, A, key="pcls")
    cnet = mlp_class(b, S, 1, key="ccls")
    actor, critic = b.var("actor"), b.var("critic")
    oa, oc = b.var("opt_a", "oa"), b.var("opt_c", "oc")
    b.setup(f"{actor} = {pnet}()")
    b.setup(f"{critic} = {cnet}()")
    two_opts = maybe(b.rng)
    if two_opts:
        b.setup(f"{oa} = {_opt(b, f'{actor}.parameters()')}")
        b.setup(f"{oc} = {_opt(b, f'{critic}.parameters()')}")
    else:
        b.setup(f"{oa} = {_opt(b, f'list({actor}.parameters()) + list({critic}.parameters())')}")
    s, adv = b.local("s", "s"), b.local("adv", "adv")
    b.step(f"{s} = torch.randn(5, {S})")
    b.step("ret = torch.randn(5)")
    b.step(f"value = {critic}({s}).squeeze(-1)")
    b.step(f"logp = F.log_softmax({actor}({s}), -1)[:, 0]")
    variant = pick(b.rng, ["no-detach", "detach", "sum", "sum-no-detach"], weights=[3, 2, 2, 1])
    if variant == "detach":
        b.step(f"{adv} = (ret - value).detach()")
        b.step(f"actor_loss = -(logp * {adv}).mean()")
        b.step("critic_loss = (ret - value).pow(2).mean()")
    else:
        # the minimal fix detaches the advantage in the actor's loss (detaching `adv` itself would
        # cut the critic's own loss): that line is the cause
        b.step(f"{adv} = ret - value")
        b.step(f"actor_loss = -(logp * {adv}{'.detach()' if variant == 'sum' else ''}).mean()",
               mark="cause" if variant in ("no-detach", "sum-no-detach") else None)
        b.step(f"critic_loss = {adv}.pow(2).mean()")
    if variant in ("sum", "sum-no-detach"):
        b.step(f"{oa}.zero_grad()" + (f"\n{oc}.zero_grad()" if two_opts else ""))
        if variant == "sum-no-detach":
            # silent: the actor's loss also trains the critic; the check compares the critic's
            # gradient with that of its own loss alone
            b.step(f"ref = torch.autograd.grad(0.5 * critic_loss, list({critic}.parameters()), retain_graph=True)")
        b.step("(actor_loss + 0.5 * critic_loss).backward()")
        if variant == "sum-no-detach":
            b.step(f"if any(not torch.allclose(p.grad, r) for p, r in zip({critic}.parameters(), ref)):\n"
                   f"    print(\"MISMATCH: the actor's loss trained the critic\")")
        b.step(f"{oa}.step()" + (f"\n{oc}.step()" if two_opts else ""))
        return variant, "silent" if variant == "sum-no-detach" else "clean"
    b.step(f"{oa}.zero_grad()")
    b.step("actor_loss.backward()")
    if two_opts:
        b.step(f"{oa}.step()" if maybe(b.rng) else "pass")
        b.step(f"{oc}.zero_grad()")
    b.step("critic_loss.backward()")
    b.step(f"{oc if two_opts else oa}.step()")
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def autograd_grad(b: Builder) -> Tuple[str, str]:
    """torch.autograd.grad with and without inputs= / retain_graph / create_graph, then a backward."""
    D, H = 3, 4
    enc_cls, head_cls = b.cls("cls", "enc"), b.cls("cls", "head")
    b.defs(f"class {enc_cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.fc = nn.Linear({D}, {H})\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        return torch.tanh(self.fc(x))")
    b.defs(f"class {head_cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.fc = nn.Linear({H}, 1)\n"
           f"\n"
           f"    def forward(self, h):\n"
           f"        return torch.sigmoid(self.fc(h))")
    enc, head, opt = b.var("encoder", "enc"), b.var("head", "headv"), b.var("opt")
    b.setup(f"{enc} = {enc_cls}()")
    b.setup(f"{head} = {head_cls}()")
    b.setup(f"{opt} = {_opt(b, f'list({enc}.parameters()) + list({head}.parameters())')}")
    x, h, loss = b.local("x"), b.local("h"), b.local("loss")
    b.step(f"{x} = torch.randn(4, {D})")
    variant = pick(b.rng, ["params-then-backward", "params-retain", "wrt-h-then-enc-only", "wrt-h-then-full",
                           "helper", "helper-retain", "penalty-create", "penalty-no-create"],
                   weights=[2, 1, 2, 2, 2, 1, 1, 1])
    b.step(f"{opt}.zero_grad()")
    if variant in ("helper", "helper-retain"):
        fn = pick(b.rng, ["loss_and_grads", "inner_step", "compute_grad_norm", "grad_stats"])
        rg = ", retain_graph=True" if variant == "helper-retain" else ""
        b.defs(f"def {fn}(enc, head, x):\n"
               f"    loss = head(enc(x)).mean()")
        # the cause: the grad call inside the helper (the minimal fix adds retain_graph there)
        b.add("defs", f"    grads = torch.autograd.grad(loss, list(head.parameters()){rg})",
              mark="cause" if variant == "helper" else None)
        b.add("defs", "    norm = sum(g.pow(2).sum() for g in grads)\n"
                      "    return loss, norm")
        b.step(f"{loss}, gnorm = {fn}({enc}, {head}, {x})")
        b.step(f"{loss}.backward()")
        b.step(f"{opt}.step()")
        return variant, "freed-graph" if variant == "helper" else "clean"
    b.step(f"{h} = {enc}({x})")
    b.step(f"{loss} = {head}({h}).mean()")
    if variant in ("params-then-backward", "params-retain"):
        rg = ", retain_graph=True" if variant == "params-retain" else ""
        b.step(f"grads = torch.autograd.grad({loss}, list({head}.parameters()){rg})",
               mark="cause" if variant == "params-then-backward" else None)
        b.step(f"{loss}.backward()")
        b.step(f"{opt}.step()")
        return variant, "freed-graph" if variant == "params-then-backward" else "clean"
    if variant in ("wrt-h-then-enc-only", "wrt-h-then-full"):
        kw = pick(b.rng, [f"{h}", f"[{h}]", f"inputs=[{h}]", f"inputs={h}"])
        call = (f"torch.autograd.grad({loss}, {kw})" if not kw.startswith("inputs")
                else f"torch.autograd.grad(outputs={loss}, {kw})")
        b.step(f"(g,) = {call}", mark="cause" if variant == "wrt-h-then-full" else None)
        if variant == "wrt-h-then-enc-only":
            b.step(f"aux = ({h} * g).sum() + {h}.pow(2).mean()")
            b.step("aux.backward()")
            b.step(f"{opt}.step()")
            return variant, "clean"
        b.step(f"({loss} + g.sum()).backward()")
        b.step(f"{opt}.step()")
        return variant, "freed-graph"
    # gradient penalty on the input
    b.step(f"{x}.requires_grad_(True)")
    b.step(f"score = {head}({enc}({x}))")
    create = variant == "penalty-create"
    b.step(f"(gx,) = torch.autograd.grad(score.sum(), {x}{', create_graph=True' if create else ''})",
           mark=None if create else "cause")
    b.step("penalty = (gx.norm(dim=1) - 1).pow(2).mean()")
    b.step("(score.mean() + 10 * penalty).backward()")
    b.step(f"{opt}.step()")
    return variant, "clean" if create else "freed-graph"


# --- in-place writes, views, aliases ----------------------------------------------------------


def inplace_saved(b: Builder) -> Tuple[str, str]:
    """An in-place write in a forward, on a tensor an op saved (error) or did not save (clean)."""
    D, H = 3, 4
    cls = b.cls("cls", "blk")
    variant = pick(b.rng, ["sigmoid-iadd", "exp-setitem", "tanh-mul_", "relu-inplace-after-sigmoid",
                           "detach-alias-zero", "view-zero", "linear-iadd", "out-of-place", "clone-setitem",
                           "relu-inplace-after-linear"],
                   weights=[2, 2, 1, 1, 2, 2, 2, 2, 2, 1])
    skip = "self.skip(x)"
    if variant == "sigmoid-iadd":
        body, mark_at, intent = ["h = torch.sigmoid(self.fc(x))", "h += " + skip], 1, "version-counter"
    elif variant == "exp-setitem":
        body, mark_at, intent = ["h = torch.exp(self.fc(x))", "h[:, 0] = 0"], 1, "version-counter"
    elif variant == "tanh-mul_":
        body, mark_at, intent = ["h = torch.tanh(self.fc(x))", "h.mul_(2)"], 1, "version-counter"
    elif variant == "relu-inplace-after-sigmoid":
        body, mark_at, intent = ["h = torch.sigmoid(self.fc(x))", "h = nn.functional.relu(h, inplace=True)"], 1, \
            "version-counter"
    elif variant == "detach-alias-zero":
        body, mark_at, intent = ["h = torch.exp(self.fc(x))", "h.detach().clamp_(max=5.0)"], 1, "version-counter"
    elif variant == "view-zero":
        body, mark_at, intent = ["h = torch.sigmoid(self.fc(x))", "h[:, :2].zero_()"], 1, "version-counter"
    elif variant == "linear-iadd":
        body, mark_at, intent = ["h = self.fc(x)", "h += " + skip], None, "clean"
    elif variant == "out-of-place":
        body, mark_at, intent = ["h = torch.sigmoid(self.fc(x))", "h = h + " + skip], None, "clean"
    elif variant == "clone-setitem":
        body, mark_at, intent = ["h = torch.exp(self.fc(x)).clone()", "h[:, 0] = 0"], None, "clean"
    else:
        body, mark_at, intent = ["h = self.fc(x)", "h = nn.functional.relu(h, inplace=True)"], None, "clean"
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.fc = nn.Linear({D}, {H})\n"
           f"        self.skip = nn.Linear({D}, {H})\n"
           f"        self.out = nn.Linear({H}, 1)\n"
           f"\n"
           f"    def forward(self, x):")
    for k, row in enumerate(body):
        b.add("defs", "        " + row, mark="cause" if k == mark_at else None)
    b.add("defs", "        return self.out(h)")
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn(4, {D})")
    b.step(f"{loss} = {model}({x}).pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, intent


def leaf_inplace(b: Builder) -> Tuple[str, str]:
    """A hand-written update of a leaf weight: in place with grad on (error) or under no_grad."""
    D, O = 3, 2
    w, bias = b.var("w", "w"), b.var("b", "bias")
    b.setup(f"{w} = torch.randn({D}, {O}, requires_grad=True)")
    b.setup(f"{bias} = torch.zeros({O}, requires_grad=True)")
    variant = pick(b.rng, ["isub", "setitem-init", "no-grad", "data", "init-no-grad", "rebind"],
                   weights=[3, 2, 2, 1, 1, 1])
    if variant == "setitem-init":
        b.setup(f"{w}[0] = 0.0", mark="cause")
    elif variant == "init-no-grad":
        b.setup(f"with torch.no_grad():\n    {w}[0] = 0.0")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    lr = pick(b.rng, ["0.1", "0.05", "1e-2"])
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = (({x} @ {w} + {bias}) - {y}).pow(2).mean()")
    b.step(f"{loss}.backward()")
    if variant == "isub":
        b.step(f"{w} -= {lr} * {w}.grad", mark="cause")
        b.step(f"{bias} -= {lr} * {bias}.grad")
        return variant, "leaf-inplace"
    if variant == "data":
        b.step(f"{w}.data -= {lr} * {w}.grad.data")
        b.step(f"{bias}.data -= {lr} * {bias}.grad.data")
    elif variant == "rebind":
        b.step(f"with torch.no_grad():\n    {w}.sub_({lr} * {w}.grad)\n    {bias}.sub_({lr} * {bias}.grad)")
    else:
        b.step(f"with torch.no_grad():\n    {w} -= {lr} * {w}.grad\n    {bias} -= {lr} * {bias}.grad")
    b.step(f"{w}.grad.zero_()" if maybe(b.rng) else f"{w}.grad = None")
    b.step(f"{bias}.grad.zero_()")
    if variant == "setitem-init":
        return variant, "leaf-view-inplace"
    return variant, "clean"


def expanded_write(b: Builder) -> Tuple[str, str]:
    """Writing into an expanded tensor (error) or into a copy of one (clean)."""
    D, H = 4, 3
    variant = pick(b.rng, ["expand-col", "expand-iadd", "expand-clone", "repeat", "expand-as-float",
                           "expand-row"], weights=[2, 2, 2, 1, 2, 1])
    w, mask, opt = b.var("weight", "w"), b.local("mask"), b.var("opt")
    b.setup(f"{w} = nn.Parameter(torch.randn({H}, {D}))")
    b.setup(f"{opt} = torch.optim.SGD([{w}], lr=0.1)")
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn(5, {D})")
    if variant in ("expand-col", "expand-iadd", "expand-row"):
        b.step(f"{mask} = torch.ones(1, {D}).expand({H}, {D})")
        if variant == "expand-col":
            b.step(f"{mask}[:, {b.loop_var} % {D}] = 0", mark="cause")
            intent = "expanded-write"
        elif variant == "expand-iadd":
            b.step(f"{mask} += 0.5", mark="cause")
            intent = "expanded-write"
        else:
            # one row: no element is written twice, so torch allows it; but every row aliases
            # the same memory, so all rows change (silent): the check sees it
            b.step(f"{mask}[0] = 0", mark="cause")
            b.step(f"if {mask}[1:].sum().item() != {(H - 1) * D}:\n"
                   f"    print(\"MISMATCH: writing one row of the expanded mask changed the others\")")
            intent = "silent"
    elif variant == "expand-clone":
        b.step(f"{mask} = torch.ones(1, {D}).expand({H}, {D}).clone()")
        b.step(f"{mask}[:, {b.loop_var} % {D}] = 0")
        intent = "clean"
    elif variant == "repeat":
        b.step(f"{mask} = torch.ones(1, {D}).repeat({H}, 1)")
        b.step(f"{mask} += 0.5")
        intent = "clean"
    else:
        b.step(f"{mask} = ({w}[:1] > 0).expand_as({w}).type_as({w})" if maybe(b.rng)
               else f"{mask} = ({w}[:1] > 0).expand_as({w}).float()")
        b.step(f"{mask}[:, 0] = 1")
        intent = "clean"
    b.step(f"{loss} = ({x} @ ({w} * {mask}).t()).pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, intent


def memory_bank(b: Builder) -> Tuple[str, str]:
    """A queue of past features kept on a module or a plain object (MoCo / XBM style), grown with
    ``torch.cat`` and cut to its last rows: detached on the way in, or not."""
    D, H, N = 3, 4, 6
    net = mlp_class(b, D, H)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    holder = pick(b.rng, ["module-attr", "object", "local"])
    variant = pick(b.rng, ["no-detach", "detach-in", "no-grad-in", "detach-bank-use"], weights=[3, 2, 1, 1])
    if holder == "object":
        qcls = pick(b.rng, ["FeatureQueue", "MemoryBank", "XBM", "Queue"])
        b.defs(f"class {qcls}:\n"
               f"    def __init__(self, size):\n"
               f"        self.size = size\n"
               f"        self.feats = torch.zeros(0, {H})\n"
               f"\n"
               f"    def enqueue(self, f):")
        if variant == "no-grad-in":
            b.add("defs", "        with torch.no_grad():\n"
                          "            self.feats = torch.cat([self.feats, f])[-self.size:]")
        else:
            tail = ".detach()" if variant == "detach-in" else ""
            b.add("defs", f"        self.feats = torch.cat([self.feats, f{tail}])[-self.size:]",
                  mark="cause" if variant == "no-detach" else None)
        bank_obj = b.var("bank", "bankobj")
        b.setup(f"{bank_obj} = {qcls}({N})")
        bank = f"{bank_obj}.feats"
        enqueue = lambda f: f"{bank_obj}.enqueue({f})"  # noqa: E731
    else:
        bank = f"{model}.queue" if holder == "module-attr" else b.var("bank", "bankvar")
        b.setup(f"{bank} = torch.zeros(0, {H})")
        if variant == "no-grad-in":
            enqueue = lambda f: f"with torch.no_grad():\n    {bank} = torch.cat([{bank}, {f}])[-{N}:]"  # noqa: E731
        else:
            tail = ".detach()" if variant == "detach-in" else ""
            enqueue = lambda f: f"{bank} = torch.cat([{bank}, {f}{tail}])[-{N}:]"  # noqa: E731
    x, f, loss = b.local("x"), b.local("feats", "f"), b.local("loss")
    b.step(f"{x} = torch.randn(3, {D})")
    b.step(f"{f} = {model}({x})")
    use = f"{bank}.detach()" if variant == "detach-bank-use" else bank
    b.step(f"{loss} = {f}.pow(2).mean() + ({f} @ {use}.t()).mean() if len({bank}) else {f}.pow(2).mean()")
    _train_tail(b, opt, loss)
    b.step(enqueue(f), mark="cause" if variant == "no-detach" and holder != "object" else None)
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def mutual_learning(b: Builder) -> Tuple[str, str]:
    """Two peers trained on each other's predictions (deep mutual learning / distillation): the
    peer's output used as a target without .detach() is freed by the first backward."""
    D, C = 3, 4
    b.need("import torch.nn.functional as F")
    ncls = mlp_class(b, D, C)
    m1, m2 = b.var("model", "m1"), b.var("peer", "m2")
    o1, o2 = b.var("opt", "o1"), b.var("opt_peer", "o2")
    b.setup(f"{m1} = {ncls}()")
    b.setup(f"{m2} = {ncls}()")
    b.setup(f"{o1} = {_opt(b, f'{m1}.parameters()')}")
    b.setup(f"{o2} = {_opt(b, f'{m2}.parameters()')}")
    x, y = b.local("x"), b.local("y")
    b.step(f"{x} = torch.randn(5, {D})")
    b.step(f"{y} = torch.randint(0, {C}, (5,))")
    b.step(f"p1, p2 = {m1}({x}), {m2}({x})")
    variant = pick(b.rng, ["no-detach", "detach", "sum"], weights=[3, 3, 1])

    def kl(student: str, teacher: str) -> str:
        return f"F.kl_div(F.log_softmax({student}, 1), F.softmax({teacher}, 1), reduction=\"batchmean\")"

    if variant == "sum":
        b.step(f"total = F.cross_entropy(p1, {y}) + {kl('p1', 'p2.detach()')} + "
               f"F.cross_entropy(p2, {y}) + {kl('p2', 'p1.detach()')}")
        b.step(f"{o1}.zero_grad()\n{o2}.zero_grad()\ntotal.backward()\n{o1}.step()\n{o2}.step()")
        return variant, "clean"
    t2 = "p2.detach()" if variant == "detach" else "p2"
    b.step(f"l1 = F.cross_entropy(p1, {y}) + {kl('p1', t2)}", mark="cause" if variant == "no-detach" else None)
    b.step(f"{o1}.zero_grad()\nl1.backward()\n{o1}.step()")
    b.step(f"l2 = F.cross_entropy(p2, {y}) + {kl('p2', 'p1.detach()')}")
    b.step(f"{o2}.zero_grad()\nl2.backward()\n{o2}.step()")
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def weight_perturb(b: Builder) -> Tuple[str, str]:
    """SAM-like two-step update: the weights are perturbed in place between the forward and its
    backward (error), or after the first backward with a fresh forward for the second (clean)."""
    D, O = 3, 2
    net = mlp_class(b, D, O)
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {net}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    fn = pick(b.rng, ["perturb", "first_step", "ascent_step", "climb"])
    variant = pick(b.rng, ["reuse-loss", "retain-reuse", "fresh-forward"], weights=[2, 2, 3])
    b.defs(f"def {fn}(model, rho=0.05):\n"
           f"    eps = []\n"
           f"    with torch.no_grad():\n"
           f"        for p in model.parameters():\n"
           f"            e = torch.zeros_like(p) if p.grad is None else rho * p.grad / (p.grad.norm() + 1e-12)")
    # the in-place write of the saved weights is a fair place to flag as well
    b.add("defs", "            p.add_(e)", mark="cause" if variant != "fresh-forward" else None)
    b.add("defs", "            eps.append(e)\n"
                  "    return eps")
    restore = pick(b.rng, ["restore", "second_step", "undo", "descend"])
    b.defs(f"def {restore}(model, eps):\n"
           f"    with torch.no_grad():\n"
           f"        for p, e in zip(model.parameters(), eps):\n"
           f"            p.sub_(e)")
    x, y, loss = b.local("x"), b.local("y"), b.local("loss")
    b.step(data_lines(b, x, y, D, O))
    b.step(f"{loss} = nn.functional.mse_loss({model}({x}), {y})")
    b.step(f"{opt}.zero_grad()")
    if variant == "reuse-loss":
        b.step(f"eps = {fn}({model})", mark="cause")
        b.step(f"{loss}.backward()")
        b.step(f"{restore}({model}, eps)")
        b.step(f"{opt}.step()")
        return variant, "version-counter"
    b.step(f"{loss}.backward({'retain_graph=True' if variant == 'retain-reuse' else ''})")
    b.step(f"eps = {fn}({model})")
    b.step(f"{opt}.zero_grad()")
    if variant == "retain-reuse":
        b.step(f"{loss}.backward()", mark="cause")
    else:
        b.step(f"nn.functional.mse_loss({model}({x}), {y}).backward()")
    b.step(f"{restore}({model}, eps)")
    b.step(f"{opt}.step()")
    return variant, "version-counter" if variant == "retain-reuse" else "clean"


def cached_forward(b: Builder) -> Tuple[str, str]:
    """A class that computes a forward once and caches it on an attribute; callers reuse it in
    every iteration (error while the cached value carries a trained graph)."""
    D, H = 3, 4
    enc_cls = mlp_class(b, D, H, key="encc")
    ccls = pick(b.rng, ["FeatureCache", "Embeddings", "Precomputed", "TargetCache"])
    variant = pick(b.rng, ["no-detach", "no-grad", "detach", "recompute"], weights=[3, 1, 2, 1])
    b.defs(f"class {ccls}:\n"
           f"    def __init__(self, encoder, x):\n"
           f"        self.encoder = encoder\n"
           f"        self.x = x\n"
           f"        self._value = None\n"
           f"\n"
           f"    def get(self):")
    if variant == "recompute":
        b.add("defs", "        return self.encoder(self.x)")
    else:
        b.add("defs", "        if self._value is None:")
        if variant == "no-grad":
            b.add("defs", "            with torch.no_grad():\n"
                          "                self._value = self.encoder(self.x)")
        else:
            tail = ".detach()" if variant == "detach" else ""
            b.add("defs", f"            self._value = self.encoder(self.x){tail}", mark="cause" if variant == "no-detach" else None)
        b.add("defs", "        return self._value")
    enc, head, opt, cache = b.var("encoder", "enc"), b.var("head", "headv"), b.var("opt"), b.var("cache")
    b.setup(f"{enc} = {enc_cls}()")
    b.setup(f"{head} = nn.Linear({H}, 1)")
    b.setup(f"{opt} = {_opt(b, f'list({enc}.parameters()) + list({head}.parameters())')}")
    b.setup(f"{cache} = {ccls}({enc}, torch.randn(5, {D}))")
    loss = b.local("loss")
    b.step(f"{loss} = {head}({cache}.get()).pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, "freed-graph" if variant == "no-detach" else "clean"


def tuple_state(b: Builder) -> Tuple[str, str]:
    """An LSTM's (h, c) state carried across iterations: both detached, one of them only, or none."""
    D, H, B = 3, 4, 2
    cell, opt = b.var("model", "lstm"), b.var("opt")
    b.setup(f"{cell} = nn.LSTMCell({D}, {H})")
    b.setup(f"{opt} = {_opt(b, f'{cell}.parameters()')}")
    state = b.var("h", "state")
    split = maybe(b.rng)
    hn, cn = (b.var("hx", "hx"), b.var("cx", "cx")) if split else (None, None)
    if split:
        b.setup(f"{hn}, {cn} = torch.zeros({B}, {H}), torch.zeros({B}, {H})")
    else:
        b.setup(f"{state} = (torch.zeros({B}, {H}), torch.zeros({B}, {H}))")
    variant = pick(b.rng, ["no-detach", "h-only", "both", "tuple-comprehension"], weights=[2, 2, 2, 1])
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn({B}, {D})")
    if split:
        if variant == "both" or variant == "tuple-comprehension":
            b.step(f"{hn}, {cn} = {hn}.detach(), {cn}.detach()")
        elif variant == "h-only":  # the fix completes this line: a fair line too
            b.step(f"{hn} = {hn}.detach()", mark="cause")
        b.step(f"{hn}, {cn} = {cell}({x}, ({hn}, {cn}))", mark="cause" if variant in ("no-detach", "h-only") else None)
        b.step(f"{loss} = {hn}.pow(2).mean()")
    else:
        if variant == "both":
            b.step(f"{state} = ({state}[0].detach(), {state}[1].detach())")
        elif variant == "tuple-comprehension":
            b.step(f"{state} = tuple(s.detach() for s in {state})")
        elif variant == "h-only":
            b.step(f"{state} = ({state}[0].detach(), {state}[1])", mark="cause")
        b.step(f"{state} = {cell}({x}, {state})", mark="cause" if variant in ("no-detach", "h-only") else None)
        b.step(f"{loss} = {state}[0].pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, "freed-graph" if variant in ("no-detach", "h-only") else "clean"


def module_state(b: Builder) -> Tuple[str, str]:
    """A module that keeps its previous output on itself and mixes it into the next forward."""
    D, H = 3, 4
    cls = b.cls("cls", "stateful")
    attr = pick(b.rng, ["prev", "last_out", "memory", "context"])
    variant = pick(b.rng, ["no-detach", "detach", "reset", "no-grad-copy"], weights=[3, 2, 1, 1])
    b.defs(f"class {cls}(nn.Module):\n"
           f"    def __init__(self):\n"
           f"        super().__init__()\n"
           f"        self.fc = nn.Linear({D}, {H})\n"
           f"        self.{attr} = None\n"
           f"\n"
           f"    def reset(self):\n"
           f"        self.{attr} = None\n"
           f"\n"
           f"    def forward(self, x):\n"
           f"        out = torch.tanh(self.fc(x))\n"
           f"        if self.{attr} is not None:\n"
           f"            out = out + 0.5 * self.{attr}")
    if variant == "detach":
        b.add("defs", f"        self.{attr} = out.detach()")
    elif variant == "no-grad-copy":
        b.add("defs", f"        with torch.no_grad():\n            self.{attr} = out.clone()")
    else:
        b.add("defs", f"        self.{attr} = out", mark="cause" if variant == "no-detach" else None)
    b.add("defs", "        return out")
    model, opt = b.var("model"), b.var("opt")
    b.setup(f"{model} = {cls}()")
    b.setup(f"{opt} = {_opt(b, f'{model}.parameters()')}")
    x, loss = b.local("x"), b.local("loss")
    b.step(f"{x} = torch.randn(2, {D})")
    if variant == "reset":
        b.step(f"{model}.reset()")
    b.step(f"{loss} = {model}({x}).pow(2).mean()")
    _train_tail(b, opt, loss)
    return variant, "freed-graph" if variant == "no-detach" else "clean"


PATTERNS: Dict[str, Tuple[Pattern, float]] = {
    "carried-state": (carried_state, 3),
    "running-stat": (running_stat, 2),
    "accumulated-loss": (accumulated_loss, 2),
    "replay-memory": (replay_memory, 2),
    "helper-once": (helper_once, 2),
    "forward-outside": (forward_outside, 2),
    "two-backwards": (two_backwards, 2),
    "gan": (gan, 2),
    "actor-critic": (actor_critic, 2),
    "autograd-grad": (autograd_grad, 3),
    "inplace-saved": (inplace_saved, 3),
    "leaf-inplace": (leaf_inplace, 2),
    "expanded-write": (expanded_write, 1),
    "memory-bank": (memory_bank, 2),
    "mutual-learning": (mutual_learning, 2),
    "weight-perturb": (weight_perturb, 2),
    "cached-forward": (cached_forward, 2),
    "tuple-state": (tuple_state, 2),
    "module-state": (module_state, 2),
}
