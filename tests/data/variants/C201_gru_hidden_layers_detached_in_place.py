# source: https://github.com/LiJunnan1992/MLNT/issues/8 ("RuntimeError: Can't detach views in-place. Use detach() instead"; a later comment: "hidden[0].detach_(); hidden[1].detach_() => hidden.detach_()"): the per-layer slices of a stacked GRU hidden state are views
# family: C
# expect: error
# line: 27
# fix: detach the whole state out of place before the next chunk: hidden = hidden.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CharRNN(nn.Module):
    def __init__(self, vocab=30, hidden=24, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16)
        self.gru = nn.GRU(16, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, hidden):
        y, hidden = self.gru(self.emb(x), hidden)
        return self.out(y), hidden


def repackage(hidden):
    for layer in range(hidden.shape[0]):
        hidden[layer].detach_()
    return hidden


if __name__ == "__main__":
    model = CharRNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.randint(0, 30, (4, 41))
    hidden = None
    for start in range(0, 40, 10):
        x, y = data[:, start:start + 10], data[:, start + 1:start + 11]
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.reshape(-1, 30), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        hidden = repackage(hidden)
        print("chunk", start // 10, "loss", loss.item())
