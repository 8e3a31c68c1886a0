# source: GPT-style configure_optimizers that split parameters into decay / no-decay groups (nanoGPT and minGPT discussions; forum threads "LayerNorm weights never change"): matrices go to the decay group by p.dim() >= 2 and the no-decay group takes only names ending in ".bias", so the LayerNorm weights fall in neither group; they get gradients and no optimizer ever steps them
# family: H
# expect: silent
# verify: the LayerNorm weight is compared before and after the training steps
# line: 28
# fix: put every parameter that is not a matrix in the no-decay group: no_decay = [p for n, p in named if p.dim() < 2]
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyBlock(nn.Module):
    def __init__(self, d=16, n_classes=5):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, n_classes)

    def forward(self, x):
        return self.head(x + self.mlp(self.ln(x)))


def configure_optimizer(model, weight_decay=0.1, lr=1e-2):
    named = list(model.named_parameters())
    decay = [p for n, p in named if p.dim() >= 2]
    no_decay = [p for n, p in named if n.endswith(".bias")]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr)


if __name__ == "__main__":
    model = TinyBlock()
    opt = configure_optimizer(model)
    start = model.ln.weight.detach().clone()
    for step in range(4):
        x, y = torch.randn(16, 16), torch.randint(0, 5, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(start, model.ln.weight.detach())
    print("MATCH" if moved else "MISMATCH: the LayerNorm weight is in no parameter group and never moved")
