# source: DropConnect / weight-drop layers (forum and blog implementations, in the spirit of AWD-LSTM's WeightDrop) that mask self.weight.data in place for the forward call and restore the original values through .data right after, before backward runs
# family: F
# expect: silent
# line: 26, 28  (backward: 41)
# fix: apply the mask out-of-place inside the graph: out = F.linear(x, self.weight * mask, self.bias) (no .data writes)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DropConnectLinear(nn.Linear):
    def __init__(self, in_features, out_features, p=0.5, reference=False):
        super().__init__(in_features, out_features)
        self.p, self.reference = p, reference
        self.gen = torch.Generator().manual_seed(123)

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        mask = torch.bernoulli(torch.full_like(self.weight, 1 - self.p), generator=self.gen) / (1 - self.p)
        if self.reference:
            return F.linear(x, self.weight * mask, self.bias)
        original = self.weight.data.clone()
        self.weight.data.mul_(mask)
        out = F.linear(x, self.weight, self.bias)
        self.weight.data.copy_(original)
        return out


def make_model(reference):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), DropConnectLinear(32, 32, reference=reference), nn.ReLU(), nn.Linear(32, 2))


def first_layer_grad(reference):
    model = make_model(reference).train()
    x = torch.randn(16, 10, generator=torch.Generator().manual_seed(1))
    y = torch.randint(0, 2, (16,), generator=torch.Generator().manual_seed(2))
    F.cross_entropy(model(x), y).backward()
    return model[0].weight.grad


if __name__ == "__main__":
    got, ref = first_layer_grad(False), first_layer_grad(True)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
