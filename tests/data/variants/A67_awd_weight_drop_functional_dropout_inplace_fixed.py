# source: AWD-LSTM WeightDrop / DropConnect on the recurrent weight matrix (salesforce/awd-lstm-lm weight_drop.py uses F.dropout(raw_w, p, training)); memory-minded ports pass inplace=True, which drops entries of the raw weight Parameter itself
# family: A
# expect: ok
# line: 24
# fix: (fixed version of A67_awd_weight_drop_functional_dropout_inplace.py) drop a copy: w_hh = F.dropout(self.weight_hh_raw, p=self.weight_p, training=self.training) (no inplace)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class WeightDropRNN(nn.Module):
    """Elman RNN whose hidden-to-hidden weights get DropConnect at every forward."""

    def __init__(self, d_in, hidden, weight_p=0.5):
        super().__init__()
        self.weight_ih = nn.Parameter(torch.randn(hidden, d_in) * 0.1)
        self.weight_hh_raw = nn.Parameter(torch.randn(hidden, hidden) * 0.1)
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.weight_p = weight_p

    def forward(self, x):
        w_hh = F.dropout(self.weight_hh_raw, p=self.weight_p, training=self.training)
        h = x.new_zeros(x.size(0), self.weight_hh_raw.size(0))
        outputs = []
        for t in range(x.size(1)):
            h = torch.tanh(x[:, t] @ self.weight_ih.t() + h @ w_hh.t() + self.bias)
            outputs.append(h)
        return torch.stack(outputs, 1)


class LanguageModel(nn.Module):
    def __init__(self, vocab=40, d=16, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = WeightDropRNN(d, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.out(self.rnn(self.embed(tokens)))


if __name__ == "__main__":
    lm = LanguageModel()
    opt = torch.optim.SGD(lm.parameters(), lr=1.0)
    data = torch.randint(0, 40, (4, 9))
    logits = lm(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), data[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("ppl", round(loss.exp().item(), 2))
