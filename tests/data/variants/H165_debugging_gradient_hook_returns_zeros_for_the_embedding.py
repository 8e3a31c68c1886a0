# source: code left with a debugging gradient hook that silences a parameter's gradient, p.register_hook(lambda g: torch.zeros_like(g)) (forum threads "embedding weights don't change", "gradient is zero for one layer"): the hook's return value replaces the gradient, so the embedding's .grad is all zeros at every step
# family: H
# expect: silent
# verify: the embedding's weight is compared before and after the steps
# line: 19
# fix: remove the hook (or return None from it so the gradient is left as it is)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagModel(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.fc = nn.Linear(d, 1)
        self.emb.weight.register_hook(lambda g: torch.zeros_like(g))

    def forward(self, tokens):
        return self.fc(self.emb(tokens).mean(1))


if __name__ == "__main__":
    model = BagModel()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    tokens, y = torch.randint(0, 20, (16, 5)), torch.randn(16, 1)
    before = model.emb.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(tokens), y).backward()
        opt.step()
    print("MISMATCH: the embedding never moves" if torch.equal(before, model.emb.weight) else "MATCH")
