# expect: error
# line: 22
# Truncated backpropagation through time without the truncation: the hidden state of one
# batch carries the previous batch's graph, which that batch's backward already freed.
import torch
import torch.nn as nn

torch.manual_seed(0)


class LM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)
        self.h = None

    def forward(self, ids):
        # Fix: `self.h = None if self.h is None else self.h.detach()` before using it.
        x = self.emb(ids)
        y, self.h = self.rnn(x, self.h)
        return self.out(y)


model = LM()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    ids = torch.randint(0, 20, (4, 10))
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), ids.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
