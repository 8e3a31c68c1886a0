# source: language models that "tie" the output projection to the input embedding with self.out.weight = nn.Parameter(self.emb.weight.clone()) (forum threads "weight tying not working", "tied weights are different after training"): clone() makes a second, independent Parameter, so the two matrices get separate gradients and drift apart
# family: H
# expect: silent
# verify: the embedding and the output weight are compared after the steps
# line: 20
# fix: share the Parameter: self.out.weight = self.emb.weight
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.out = nn.Linear(d, vocab, bias=False)
        self.out.weight = nn.Parameter(self.emb.weight.clone())

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        return self.out(h)


if __name__ == "__main__":
    model = TinyLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    tokens = torch.randint(0, 20, (4, 7))
    for step in range(2):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    tied = torch.equal(model.out.weight, model.emb.weight)
    print("MATCH" if tied else "MISMATCH: the tied weights drift apart")
