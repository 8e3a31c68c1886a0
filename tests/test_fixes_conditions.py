"""The conditions under which each fix is right (issue 27): the realisers added or narrowed to
reach the labelled hazards, each with the case it must do and the look-alike it must refuse.
The end-to-end proof (the fixed programs run under torch) is tests/test_fix_cases.py; that no
fix changes a correct program is tests/test_fix_oracle.py."""
from __future__ import annotations

from fixes_helpers import diag, fix, must, realise, span_of, src

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.fixpolicy import vet_fixes


# --------------------------------------------------------------------------- policy
def test_information_findings_carry_only_preserving_fixes_and_never_safe_ones():
    fixes = [fix("no_grad"), fix("detach", safe=False, mode="running_total"), fix("clone", mode="before_write"),
             fix("clone", mode="break_alias", safe=False), fix("retain_grad", safe=False),
             fix("detach_instead", safe=True)]
    vetted = vet_fixes(Severity.INFORMATION, fixes)
    assert [(f.kind, f.param("mode"), f.safe) for f in vetted] == [("clone", "before_write", False)]
    assert vetted[0].preferred
    assert [f.kind for f in vet_fixes(Severity.WARNING, fixes)] == [f.kind for f in fixes]
    assert not vet_fixes(Severity.ERROR, [fix("complete_grads")])[0].safe


# --------------------------------------------------------------------------- clone of a .data write
DATA_WRITE = src("""
    def scale(delta, s):
        for i in range(2):
            delta.data[i] = delta.data[i] * s
        return delta

    def clip(model):
        for p in model.parameters():
            p.data[0] = p.data[0] * 0.5
""")


def test_a_data_write_becomes_a_recorded_write_on_a_copy_only_for_a_tensor_the_function_returns():
    d = diag("GW601", span_of(DATA_WRITE, "delta.data[i] = delta.data[i] * s"), [fix("clone", safe=False, mode="data")])
    new = must(DATA_WRITE, d)
    assert "        delta = delta.clone()\n        delta[i] = delta[i] * s\n" in new
    loop_var = diag("GW601", span_of(DATA_WRITE, "p.data[0] = p.data[0] * 0.5"), [fix("clone", safe=False, mode="data")])
    assert realise(DATA_WRITE, loop_var) is None  # the write must reach the parameter


# --------------------------------------------------------------------------- move_step: backward first
CLAMP = src("""
    def critic_step(netD, real, opt):
        err = netD(real).mean()
        for p in netD.parameters():
            p.data.clamp_(-0.01, 0.01)
        err.backward()
        opt.step()

    def critic_step2(netD, real, opt):
        err = netD(real).mean()
        for p in netD.parameters():
            p.data.clamp_(-0.01, 0.01)
        err = err + netD(real).mean()
        err.backward()
""")


def test_the_backward_moves_before_a_clamp_loop_unless_the_loss_is_built_after_it():
    f = fix("move_step", safe=False, backward_span=span_of(CLAMP, "err.backward()"))
    d = diag("GW601", span_of(CLAMP, "p.data.clamp_(-0.01, 0.01)"), [f])
    new = must(CLAMP, d)
    assert "    err.backward()\n    for p in netD.parameters():\n        p.data.clamp_(-0.01, 0.01)\n    opt.step()" in new
    f2 = fix("move_step", safe=False, backward_span=span_of(CLAMP, "err.backward()", 1))
    d2 = diag("GW601", span_of(CLAMP, "p.data.clamp_(-0.01, 0.01)", 1), [f2])
    assert realise(CLAMP, d2) is None


# --------------------------------------------------------------------------- recompute
GAN = src("""
    for epoch in range(2):
        noise = torch.randn(4)
        for j in range(3):
            fake = netG(noise)
            lossD(fake.detach()).backward()
        for j in range(3):
            errG = netD(fake).mean()
            errG.backward()
            optG.step()
""")


def test_a_value_made_in_an_earlier_loop_is_copied_into_the_loop_that_reuses_it():
    d = diag("GW501", span_of(GAN, "optG.step()"),
             [fix("recompute", safe=False, target=span_of(GAN, "fake = netG(noise)"), mode="into_loop")],
             related=[("backward", span_of(GAN, "errG.backward()"), "")])
    new = must(GAN, d)
    assert "    for j in range(3):\n        fake = netG(noise)\n        errG = netD(fake).mean()" in new
    assert new.count("fake = netG(noise)") == 2  # the D steps keep theirs


FORWARD_OUTSIDE = src("""
    logits = xenc @ W
    probs = logits.softmax(1)
    loss = -probs[0, 1].log()
    print("start")
    for k in range(10):
        W.grad = None
        loss.backward()
""")


def test_the_whole_forward_moves_into_the_loop_only_in_the_chain_mode():
    target = span_of(FORWARD_OUTSIDE, "xenc @ W")
    related = [("backward", span_of(FORWARD_OUTSIDE, "loss.backward()"), "")]
    one = must(FORWARD_OUTSIDE, diag("GW403", target, [fix("recompute", safe=False, target=target,
                                                           mode="into_loop")], related))
    assert "for k in range(10):\n    logits = xenc @ W\n    W.grad" in one and "probs = logits" in one.split("for k")[0]
    chain = must(FORWARD_OUTSIDE, diag("GW403", target, [fix("recompute", safe=False, target=target,
                                                             mode="into_loop_chain")], related))
    assert chain.split("for k")[0].strip().endswith('print("start")')
    assert "    logits = xenc @ W\n    probs = logits.softmax(1)\n    loss = -probs[0, 1].log()\n" in chain


# --------------------------------------------------------------------------- gradient flow
def test_leave_no_grad_moves_a_statement_in_front_of_its_block():
    text = src("""
        with torch.no_grad():
            q = policy(s).gather(1, a)
            nxt = target(s2).max(1).values
            y = r + nxt
        loss = (q - y).pow(2).mean()
    """)
    d = diag("GW701", span_of(text, "q = policy(s).gather(1, a)"), [fix("leave_no_grad", safe=False)])
    assert must(text, d).startswith("q = policy(s).gather(1, a)\nwith torch.no_grad():\n    nxt =")
    uses = text.replace("q = policy(s).gather(1, a)", "q = policy(nxt0)").replace("with torch.no_grad():\n",
                                                                                   "with torch.no_grad():\n    nxt0 = s * 2\n")
    d2 = diag("GW701", span_of(uses, "q = policy(nxt0)"), [fix("leave_no_grad", safe=False)])
    assert realise(uses, d2) is None  # it reads what the block computes before it


def test_reduce_loss_and_allow_unused_for_autograd_grad():
    text = src("""
        g = torch.autograd.grad(activs, xs, retain_graph=False)[0]
        h = torch.autograd.grad(out, [w, b], create_graph=True)
        k = torch.autograd.grad(activs, xs, grad_outputs=torch.ones_like(activs))
    """)
    d = diag("GW702", span_of(text, "torch.autograd.grad(activs, xs, retain_graph=False)"),
             [fix("reduce_loss", safe=False, reduce="mean")])
    assert "torch.autograd.grad(activs.mean(), xs, retain_graph=False)" in must(text, d)
    d2 = diag("GW702", span_of(text, "torch.autograd.grad(activs, xs, grad_outputs=torch.ones_like(activs))"),
              [fix("reduce_loss", safe=False, reduce="mean")])
    assert realise(text, d2) is None
    d3 = diag("GW703", span_of(text, "torch.autograd.grad(out, [w, b], create_graph=True)"),
              [fix("allow_unused", safe=False)])
    assert "create_graph=True, allow_unused=True, materialize_grads=True)" in must(text, d3)


def test_chain_rule_covers_every_gradient_of_the_returned_tuple_but_no_tuple_arithmetic():
    text = src("""
        class F(torch.autograd.Function):
            @staticmethod
            def backward(ctx, grad_output):
                return gh, grad_output * gw, None

            @staticmethod
            def other(ctx, grad_output):
                return (None,) * 3
    """)
    d = diag("GW709", span_of(text, "gh"), [fix("chain_rule", safe=False, grad="grad_output")])
    assert "return grad_output * gh, grad_output * gw, None" in must(text, d)
    d2 = diag("GW709", span_of(text, "(None,) * 3"), [fix("chain_rule", safe=False, grad="grad_output")])
    assert realise(text, d2) is None


def test_freeze_first_moves_the_freeze_before_the_new_head():
    text = src("""
        def init(n, extract=True):
            model = Net()
            model.fc = nn.Linear(16, n)
            if extract:
                for p in model.parameters():
                    p.requires_grad = False
            return model
    """)
    d = diag("GW701", span_of(text, "p.requires_grad = False"), [fix("freeze_first", safe=False)])
    new = must(text, d)
    assert new.index("p.requires_grad = False") < new.index("model.fc = nn.Linear(16, n)")
    no_head = text.replace("    model.fc = nn.Linear(16, n)\n", "")
    assert realise(no_head, diag("GW701", span_of(no_head, "p.requires_grad = False"),
                                 [fix("freeze_first", safe=False)])) is None


def test_explicit_softmax_and_a_module_switched_in_place_by_a_loop():
    text = src("""
        def forward(self, x):
            s = self.q(x) @ self.k(x).mT
            return s.softmax(dim=-1)

        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True
    """)
    d = diag("GW201", span_of(text, "s.softmax(dim=-1)"), [fix("explicit_softmax")])
    new = must(text, d)
    assert "    exp_shifted = (s - s.amax(dim=-1, keepdim=True)).exp()\n" \
           "    return exp_shifted / exp_shifted.sum(dim=-1, keepdim=True)" in new
    d2 = diag("GW201", span_of(text, "s.softmax(dim=-1)"),
              [fix("inplace_false", target=span_of(text, "s.softmax"), site=span_of(text, "m.inplace = True"),
                   module="Dropout")])
    assert "if isinstance(m, nn.ReLU):\n" in must(text, d2)
    d3 = diag("GW201", span_of(text, "s.softmax(dim=-1)"),
              [fix("inplace_false", target=span_of(text, "s.softmax"), site=span_of(text, "m.inplace = True"),
                   module="GELU")])
    assert realise(text, d3) is None


def test_a_statement_saving_a_view_of_what_it_writes_clones_that_view():
    text = src("""
        for i in range(1, n):
            f[i] = f[i - 1] * w + b
            g[i] = h[i - 1] * w
    """)
    d = diag("GW201", span_of(text, "f[i] = f[i - 1] * w + b"), [fix("clone", mode="saved_source")],
             related=[("save", span_of(text, "f[i - 1] * w"), "")])
    assert "f[i] = f[i - 1].clone() * w + b" in must(text, d)
    other = diag("GW201", span_of(text, "g[i] = h[i - 1] * w"), [fix("clone", mode="saved_source")],
                 related=[("save", span_of(text, "h[i - 1] * w"), "")])
    assert realise(text, other) is None  # what it reads is not a view of what it writes
