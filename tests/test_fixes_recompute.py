"""``recompute`` and ``move_step``: statements moved or copied, re-indented, only when the
reorder is checked to keep every other value the same."""
from __future__ import annotations

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


# --------------------------------------------------------------------------- before_use
def test_before_use_repeats_the_forward_before_the_first_use_after_the_backward():
    text = src("""
        for it in range(4):
            logits = model(X)  # forward
            loss = F.cross_entropy(logits, Y)
            loss.backward()
            optimizer.step()
            if it % 2:
                dist = Categorical(logits=logits)
                loss2 = F.cross_entropy(logits, dist.sample())
                loss2.backward()
    """)
    d = diag("GW402", span_of(text, "F.cross_entropy(logits, dist.sample())"),
             [fix("recompute", safe=False, mode="before_use", name="logits")],
             related=[("freed", span_of(text, "loss.backward()"), "frees")])
    new = must(text, d)
    assert "    if it % 2:\n        logits = model(X)  # forward\n        dist = Categorical(logits=logits)" in new


def test_before_use_refuses_when_an_input_changed():
    text = src("""
        h = enc(x)
        h.sum().backward()
        x = x + 1
        out = h * 2
    """)
    d = diag("GW402", span_of(text, "h * 2"), [fix("recompute", safe=False, mode="before_use", name="h")],
             related=[("freed", span_of(text, "h.sum().backward()"), "frees")])
    assert realise(text, d) is None


# --------------------------------------------------------------------------- into_loop
def test_into_loop_moves_the_definition_crlf():
    text = src("""
        def run_episode(policy, optimizer, rewards):
            pi = policy.distribution()  # cached logits
            for t, r in enumerate(rewards):
                a = pi.sample()
                loss = -(pi.log_prob(a) * r)
                loss.backward()
    """, crlf=True)
    d = diag("GW403", span_of(text, "policy.distribution()"),
             [fix("recompute", safe=False, target=span_of(text, "policy.distribution()"), mode="into_loop")],
             related=[("freed", span_of(text, "loss.backward()"), "frees")])
    new = must(text, d)
    assert new == src("""
        def run_episode(policy, optimizer, rewards):
            for t, r in enumerate(rewards):
                pi = policy.distribution()  # cached logits
                a = pi.sample()
                loss = -(pi.log_prob(a) * r)
                loss.backward()
    """, crlf=True)


def test_into_loop_copies_when_used_after_and_refuses_when_the_header_uses_it():
    text = src("""
        h = model.embed(feat)
        for n in range(3):
            out = model(h)
            out.sum().backward()
        print(h)
        Y = X @ w
        for x, y in zip(X, Y):
            (x @ v - y).sum().backward()
    """)
    d = diag("GW403", span_of(text, "model.embed(feat)"),
             [fix("recompute", safe=False, target=span_of(text, "model.embed(feat)"), mode="into_loop")],
             related=[("freed", span_of(text, "out.sum().backward()"), "frees")])
    new = must(text, d)
    assert new.startswith("h = model.embed(feat)\nfor n in range(3):\n    h = model.embed(feat)\n")
    d2 = diag("GW403", span_of(text, "X @ w"),
              [fix("recompute", safe=False, target=span_of(text, "X @ w"), mode="into_loop")],
              related=[("freed", span_of(text, "(x @ v - y).sum().backward()"), "frees")])
    assert realise(text, d2) is None


# --------------------------------------------------------------------------- after_step
GAN = """
    opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
    opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)
    for step in range(3):
        G_paintings = G(torch.randn(16, 5))
        prob_artist1 = D(G_paintings)
        G_loss = torch.mean(torch.log(1. - prob_artist1))

        prob_artist0 = D(artist_paintings)
        prob_artist1 = D(G_paintings)
        D_loss = -torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
        opt_D.zero_grad()
        D_loss.backward(retain_graph=True)
        opt_D.step()
        opt_G.zero_grad()
        G_loss.backward()
        opt_G.step()
"""


def step_diag(text, step, backward, kind="recompute", mode="after_step", opt=""):
    return diag("GW501", span_of(text, step),
                [fix(kind, safe=False, mode=mode, opt=opt or step.split(".step")[0],
                     backward_span=span_of(text, backward))])


def test_after_step_moves_the_later_loss_through_the_stepped_model():
    text = src(GAN)
    new = must(text, step_diag(text, "opt_D.step()", "G_loss.backward()"))
    assert "    opt_D.step()\n    prob_artist1 = D(G_paintings)\n    G_loss = torch.mean(" in new
    assert new.count("G_loss = ") == 1 and "G_paintings = G(torch.randn(16, 5))" in new


def test_after_step_loop_carried_value_is_rebuilt_in_the_loop():
    text = src("""
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        h = model.embedding_h(feat)
        for n in range(3):
            out = model(h)
            loss = F.mse_loss(out, label)
            optimizer.zero_grad()
            loss.backward(retain_graph=True)
            optimizer.step()
    """)
    new = must(text, step_diag(text, "optimizer.step()", "loss.backward(retain_graph=True)"))
    assert "for n in range(3):\n    h = model.embedding_h(feat)\n    out = model(h)" in new
    assert new.count("h = model.embedding_h(feat)") == 1


def test_after_step_refused_when_the_later_loss_is_written_after_the_step():
    text = src("""
        optD = optim.Adam(D.parameters())
        optG = optim.Adam(G.parameters())
        g = G(t)
        d = D(g)
        lossD = d.sum()
        lossD.backward(retain_graph=True)
        optD.step()
        lossG = (g + d).sum()
        optG.zero_grad()
        lossG.backward()
        optG.step()
    """)
    assert realise(text, step_diag(text, "optD.step()", "lossG.backward()")) is None
    # ... and then the step can move after the later backward
    new = must(text, step_diag(text, "optD.step()", "lossG.backward()", kind="move_step", mode=""))
    assert "lossG.backward()\noptD.step()\noptG.step()" in new


# --------------------------------------------------------------------------- move_step
def test_move_step_refuses_when_the_model_runs_in_between_or_the_same_optimizer_is_zeroed():
    text = src("""
        optD = optim.Adam(D.parameters())
        lossD.backward(retain_graph=True)
        optD.step()
        extra = D(x)
        lossG.backward()
    """)
    assert realise(text, step_diag(text, "optD.step()", "lossG.backward()", kind="move_step", mode="")) is None
    text2 = text.replace("extra = D(x)", "optD.zero_grad()")
    assert realise(text2, step_diag(text2, "optD.step()", "lossG.backward()", kind="move_step", mode="")) is None


def test_move_step_moves_a_helper_update_through_data():
    text = src("""
        def sgd_update_data(module, lr):
            for p in module.parameters():
                p.data.add_(p.grad, alpha=-lr)

        G_loss = torch.mean(torch.log(1. - D(G(z))))
        D_loss.backward(retain_graph=True)
        sgd_update_data(D, lr=0.5)   # hand-written SGD

        G.zero_grad()
        G_loss.backward()
    """)
    d = diag("GW601", span_of(text, "p.data.add_(p.grad, alpha=-lr)"),
             [fix("move_step", safe=False, backward_span=span_of(text, "G_loss.backward()"))],
             related=[("save", span_of(text, "D(G(z))"), "saves"), ("backward", span_of(text, "G_loss.backward()"), "b")])
    new = must(text, d)
    assert new.endswith("G.zero_grad()\nG_loss.backward()\nsgd_update_data(D, lr=0.5)   # hand-written SGD\n")


def test_engine_to_fix_gan_order():
    text = src("""
        import torch
        from torch import nn
        G, D = nn.Linear(2, 2), nn.Linear(2, 2)
        optD = torch.optim.Adam(D.parameters())
        optG = torch.optim.Adam(G.parameters())
        t = torch.ones(2, requires_grad=True)
        for i in range(2):
            fake = G(t)
            lossG = D(fake).sum()
            d = D(fake.detach())
            optD.zero_grad()
            d.sum().backward()
            optD.step()
            optG.zero_grad()
            lossG.backward()
            optG.step()
    """)
    codes = [d.code for d in analyze(text)]
    assert "GW501" in codes
    new = fix_all(text, unsafe=True)
    assert "optD.step()\n    lossG = D(fake).sum()\n" in new
    assert not [d for d in analyze(new) if d.severity <= 2]
