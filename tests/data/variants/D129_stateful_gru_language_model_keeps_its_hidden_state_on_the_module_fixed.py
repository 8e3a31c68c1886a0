# source: stateful language models that keep the recurrent state on the module (self.hidden) between batches and feed it back at the next forward (forum threads "Trying to backward through the graph a second time" with a stateful LSTM/GRU): the second backward runs into the first batch's freed graph
# family: D
# expect: ok
# line: 22  (backward: 34)
# fix: (fixed version of D129_stateful_gru_language_model_keeps_its_hidden_state_on_the_module.py) store a detached state: y, h = self.rnn(self.emb(tokens), self.hidden); self.hidden = h.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StatefulLM(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, 16, batch_first=True)
        self.out = nn.Linear(16, vocab)
        self.hidden = None

    def forward(self, tokens):
        y, h = self.rnn(self.emb(tokens), self.hidden)
        self.hidden = h.detach()
        return self.out(y)


if __name__ == "__main__":
    lm = StatefulLM()
    opt = torch.optim.SGD(lm.parameters(), lr=0.1)
    stream = torch.randint(0, 20, (2, 31))
    for i in range(3):
        tokens, target = stream[:, i * 10:i * 10 + 10], stream[:, i * 10 + 1:i * 10 + 11]
        opt.zero_grad()
        loss = F.cross_entropy(lm(tokens).reshape(-1, 20), target.reshape(-1))
        loss.backward()
        opt.step()
        print("batch", i, "loss %.4f" % loss.item())
