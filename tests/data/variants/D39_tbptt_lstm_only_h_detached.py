# source: truncated-BPTT loops that detach only h of the LSTM state tuple (hidden = (h.detach(), c)); the cell state still carries the previous chunk's freed graph
# family: D
# expect: error
# line: 33, 34  (backward: 37)
# fix: detach both tensors of the state: hidden = (h.detach(), c.detach())
import torch
from torch import nn

torch.manual_seed(0)


class LanguageModel(nn.Module):
    def __init__(self, vocab=25, d=12, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, vocab)

    def forward(self, x, hidden=None):
        out, hidden = self.lstm(self.emb(x), hidden)
        return self.fc(out), hidden


if __name__ == "__main__":
    model = LanguageModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.randint(0, 25, (2, 25))
    hidden = None
    for i in range(0, 20, 5):
        x, y = data[:, i:i + 5], data[:, i + 1:i + 6]
        if hidden is not None:
            h, c = hidden
            hidden = (h.detach(), c)
        logits, hidden = model(x, hidden)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 25), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
