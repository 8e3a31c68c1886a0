# source: itayhubara/BinaryNet.pytorch (BinarizeLinear: self.weight.data = Binarize(self.weight.org) in forward; the training loop restores p.data.copy_(p.org) after loss.backward(), steps, and writes back p.org.copy_(p.data.clamp_(-1, 1)))
# family: G
# expect: ok
# line: 17, 42  (backward: 38)
# fix: none needed - the .data writes happen before the forward (binarize) and after backward (restore, clamp), never between a forward and its backward; the result equals the straight-through estimator w + (sign(w) - w).detach() (checked below)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinarizeLinear(nn.Linear):
    def forward(self, x):
        if not hasattr(self.weight, "org"):
            self.weight.org = self.weight.data.clone()
        self.weight.data = torch.sign(self.weight.org)
        return F.linear(x, self.weight, self.bias)


class SteBinaryLinear(nn.Linear):
    def forward(self, x):
        w_b = self.weight + (torch.sign(self.weight) - self.weight).detach()
        return F.linear(x, w_b, self.bias)


def build(layer_cls):
    torch.manual_seed(0)
    return nn.Sequential(layer_cls(12, 32), nn.BatchNorm1d(32), nn.Hardtanh(),
                         layer_cls(32, 32), nn.BatchNorm1d(32), nn.Hardtanh(), nn.Linear(32, 3))


def train(model, batches, binarynet_loop):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        if binarynet_loop:
            for p in model.parameters():
                if hasattr(p, "org"):
                    p.data.copy_(p.org)
        optimizer.step()
        if binarynet_loop:
            for p in model.parameters():
                if hasattr(p, "org"):
                    p.org.copy_(p.data.clamp_(-1, 1))
        else:
            with torch.no_grad():
                for m in model:
                    if isinstance(m, SteBinaryLinear):
                        m.weight.clamp_(-1, 1)
    return [p.detach().clone() for p in model.parameters()]


if __name__ == "__main__":
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 12, generator=gen), torch.randint(0, 3, (16,), generator=gen)) for _ in range(3)]
    got = train(build(BinarizeLinear), batches, True)
    ref = train(build(SteBinaryLinear), batches, False)
    ok = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH")
