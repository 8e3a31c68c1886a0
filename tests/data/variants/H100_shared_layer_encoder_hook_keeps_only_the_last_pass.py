# source: ALBERT / universal-transformer style encoders that apply one shared block several times, with an activation penalty collected by forward hooks (forum threads "my hook only sees the last layer"): the hook stores into acts[name], and the shared block runs once per pass, so every pass overwrites the slot and the penalty meant for all passes covers only the last one
# family: H
# expect: silent
# verify: the hooked penalty is compared with the same penalty computed over every pass of the shared block
# line: 42, 47
# fix: keep every pass: acts.setdefault(name, []).append(out), and sum the penalty over the list
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SharedLayerEncoder(nn.Module):
    def __init__(self, d=16, n_passes=3, n_classes=4):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(d, d), nn.Tanh())
        self.n_passes = n_passes
        self.head = nn.Linear(d, n_classes)

    def forward(self, x):
        for _ in range(self.n_passes):
            x = x + self.block(x)
        return self.head(x)


def every_pass_penalty(model, x):
    total, h = 0.0, x
    for _ in range(model.n_passes):
        out = model.block(h)
        total = total + out.pow(2).mean()
        h = h + out
    return total


if __name__ == "__main__":
    model = SharedLayerEncoder()
    acts = {}
    for name, module in model.named_children():
        if isinstance(module, nn.Sequential):
            def keep(mod, inp, out, name=name):
                acts[name] = out
            module.register_forward_hook(keep)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    logits = model(x)
    penalty = acts["block"].pow(2).mean()
    loss = F.cross_entropy(logits, y) + 1e-2 * penalty
    opt.zero_grad()
    loss.backward()
    with torch.no_grad():
        expected = every_pass_penalty(model, x)
    opt.step()
    same = torch.allclose(penalty.detach(), expected)
    print("penalty %.5f, over every pass %.5f" % (penalty.item(), expected.item()))
    print("MATCH" if same else "MISMATCH: the penalty covers only the last pass of the shared block")
