# source: layer-wise learning-rate tricks that scale one parameter's gradient with a hook, p.register_hook(lambda g: g * 0.1) (embedding gradient scaling in language models): the hook returns a scaled gradient, so the embedding still trains, more slowly
# family: G
# expect: ok
# verify: the embedding's weight is compared before and after the steps
# line: 19
# fix: none needed: the hook scales the gradient, it does not remove it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagModel(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.fc = nn.Linear(d, 1)
        self.emb.weight.register_hook(lambda g: g * 0.1)

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
