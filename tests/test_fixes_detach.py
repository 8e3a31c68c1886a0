"""``detach``: where the cut goes for each kind of hazard (stale uses, carried state, data
built before a loop, a later loss, a polluted gradient, a running total)."""
from __future__ import annotations

from fixes_helpers import analyze, diag, fix, fix_all, must, realise, span_of, src


def stale(text, use, freed, name="", mode="stale_use"):
    return diag("GW402", span_of(text, use), [fix("detach", safe=False, target=span_of(text, use), mode=mode,
                                                  name=name)],
                related=[("freed", span_of(text, freed), "frees")])


def test_cache_across_iterations_is_detached_where_it_is_stored():
    text = src("""
        temp = []
        for i in range(10):
            h = fc1(a)
            out = fc2(h)
            temp.append(h)  # cache
            if i != 0:
                out = out + temp[0].mean()
            loss = crit(out, t)
            loss.backward()
    """)
    new = must(text, stale(text, "temp[0].mean()", "loss.backward()", name="h"))
    assert "temp.append(h.detach())  # cache" in new


def test_local_name_is_detached_at_the_use():
    text = src("""
        g = G(t)
        d = D(g)
        lossD = d.sum()
        lossD.backward()
        optD.step()
        lossG = (g + d).sum()
    """)
    new = must(text, stale(text, "g + d", "lossD.backward()", name="d"))
    assert "lossG = (g + d.detach()).sum()" in new


def test_accumulator_is_detached_before_the_loop_that_adds_to_it():
    text = src("""
        def step(model, xs):
            loss = 0
            for x in xs:
                loss += model(x)
            loss.backward()
            for x in xs:
                part = model(x)
                loss += part
            loss.backward()
    """)
    new = must(text, stale(text, "loss += part", "loss.backward()", name="part"))
    assert "    loss = loss.detach()\n    for x in xs:\n        part = model(x)" in new


def test_carried_attribute_tuple_is_detached_elementwise_before_the_use_with_tabs():
    text = src("""
        class LM(nn.Module):
            def reset(self, h):
                self.hidden = (h, h.clone())
            @torch.jit.unused
            def forward(self, x):
                out, self.hidden = self.lstm(self.embed(x), self.hidden)
                return out
    """, tabs=True)
    use = "out, self.hidden = self.lstm(self.embed(x), self.hidden)"
    new = must(text, stale(text, use, "return out", name="out"))
    assert "\t\tself.hidden = tuple(h.detach() for h in self.hidden)\n\t\t" + use in new


def test_graph_carried_data_is_detached_as_a_whole():
    text = src("""
        X = torch.randn(400, 2)
        Y = torch.mm(X, true_W) + \\
            true_b  # synthetic targets
    """)
    d = diag("GW403", span_of(text, "torch.mm(X, true_W)"),
             [fix("detach", safe=False, target=span_of(text, "torch.mm(X, true_W)"), mode="assignment")])
    assert "Y = (torch.mm(X, true_W) + \\\n    true_b).detach()  # synthetic targets" in must(text, d)


def test_polluted_gradients_detach_the_call_input():
    text = src("""
        errD = self.bce(self.netD(real), ones) + self.bce(self.netD(
            fake), zeros)
    """, crlf=True)
    call = "self.netD(\r\n    fake)"
    d = diag("GW503", span_of(text, call), [fix("detach", safe=False, target=span_of(text, call), mode="call_arg")])
    assert "self.netD(\r\n    fake.detach()), zeros)" in must(text, d)


def test_running_total_detached_unless_backwarded():
    text = src("""
        total = 0
        for i in range(3):
            loss = (w * 2).sum()
            loss.backward()
            total += loss  # for the log
    """)
    d = diag("GW404", span_of(text, "total += loss"),
             [fix("detach", safe=False, target=span_of(text, "total += loss"), mode="running_total")])
    assert "total += loss.detach()  # for the log" in must(text, d)
    text2 = text + "total.backward()\n"
    assert realise(text2, diag("GW404", span_of(text2, "total += loss"), d.fixes)) is None


def test_later_loss_detach_when_it_trains_another_model():
    text = src("""
        optim_G = torch.optim.Adam(genb.parameters())
        optim_D = torch.optim.Adam(disc.parameters())
        pred_g = genb(v, q, z)
        g_loss = bce(pred_g, a)
        g_loss.backward(retain_graph=True)
        optim_G.step()
        d_loss = F.softplus(-disc(a)).mean() + F.softplus(disc(torch.sigmoid(pred_g))).mean()
        d_loss.backward()
        optim_D.step()
    """)
    d = diag("GW501", span_of(text, "optim_G.step()"),
             [fix("detach", safe=False, mode="later_loss", opt="optim_G",
                  backward_span=span_of(text, "d_loss.backward()"))])
    assert "disc(torch.sigmoid(pred_g.detach()))" in must(text, d)


def test_engine_to_fix_gan_missing_detach():
    text = src("""
        import torch
        from torch import nn
        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        optG = torch.optim.SGD(G.parameters(), lr=0.01)
        optD = torch.optim.SGD(D.parameters(), lr=0.01)
        optG.zero_grad()
        optD.zero_grad()
        fake = G(torch.randn(8, 4))
        errD = D(fake).mean()
        errD.backward()
        optD.step()
        errG = -D(G(torch.randn(8, 4))).mean()
        errG.backward()
        optG.step()
    """)
    assert any(d.code == "GW503" for d in analyze(text))
    assert fix_all(text, unsafe=False) == text  # detach is unsafe
    new = fix_all(text, unsafe=True)
    assert "errD = D(fake.detach()).mean()" in new
    assert not [d for d in analyze(new) if d.code == "GW503"]


def test_store_site_detaches_the_stored_value_never_the_container():
    text = src("""
        temp = []
        for i in range(10):
            h = fc1(a)
            out = fc2(h)
            temp.append(
                h)  # kept for later
            if i:
                out = out + temp[0].mean()
            out.sum().backward()
    """, crlf=True)
    store = "temp.append(\r\n        h)"
    new = must(text, stale(text, store, "out.sum().backward()", name="h"))
    assert "temp.append(\r\n        h.detach())  # kept for later" in new
    assert "temp.detach()" not in new


def test_bptt_state_of_unknown_kind_is_detached_whatever_it_is():
    text = src("""
        hidden = net.init_hidden()
        for step in range(3):
            y, hidden = net(torch.randn(6, 4, 3), hidden)
            loss = y.pow(2).mean()
            loss.backward()
    """)
    use = "y, hidden = net(torch.randn(6, 4, 3), hidden)"
    new = must(text, stale(text, use, "loss.backward()", name="o"))
    assert ("    hidden = hidden.detach() if isinstance(hidden, torch.Tensor) else tuple(h.detach() for h in hidden)\n"
            "    " + use) in new
