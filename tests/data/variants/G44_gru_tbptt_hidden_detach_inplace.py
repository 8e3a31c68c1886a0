# source: truncated-BPTT training loops that cut the history with hidden.detach_() at the start of every chunk (word_language_model variants)
# family: G
# expect: ok
# line: 30  (backward: 34)
# fix: none needed - detach_() is applied to the GRU's returned hidden state (not a view) after the previous chunk's backward, so the next chunk's graph starts from a leaf
import torch
from torch import nn

torch.manual_seed(0)


class GRULM(nn.Module):
    def __init__(self, vocab=30, d=12, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.gru = nn.GRU(d, hidden, num_layers=2, batch_first=True)
        self.fc = nn.Linear(hidden, vocab)

    def forward(self, x, h):
        out, h = self.gru(self.emb(x), h)
        return self.fc(out), h


if __name__ == "__main__":
    model = GRULM()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    data = torch.randint(0, 30, (3, 26))
    hidden = torch.zeros(2, 3, 16)
    for i in range(0, 25, 5):
        hidden.detach_()
        logits, hidden = model(data[:, i:i + 5], hidden)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 30), data[:, i + 1:i + 6].reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
    print("loss", loss.item())
