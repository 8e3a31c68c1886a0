# source: torch.nn.Embedding docs note on max_norm ("Embedding's forward modifies the weight in place ... requires cloning Embedding.weight") hit by weight-tied RNN decoders that project onto embed.weight and then look up the next token
# family: B
# expect: error
# line: 16, 23  (backward: 34)
# fix: project onto a copy, as the docs recommend: logits = h @ self.embed.weight.clone().t() (or drop max_norm)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TiedGRUDecoder(nn.Module):
    def __init__(self, vocab=30, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, max_norm=1.0)
        self.cell = nn.GRUCell(dim, dim)

    def forward(self, tokens):
        h = tokens.new_zeros(tokens.size(0), self.cell.hidden_size, dtype=torch.float)
        logits = []
        for t in range(tokens.size(1)):
            e = self.embed(tokens[:, t])
            h = self.cell(e, h)
            logits.append(h @ self.embed.weight.t())
        return torch.stack(logits, dim=1)


if __name__ == "__main__":
    dec = TiedGRUDecoder()
    seq = torch.randint(0, 30, (3, 6))
    logits = dec(seq[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 30), seq[:, 1:].reshape(-1))
    loss.backward()
    print("loss", round(loss.item(), 4))
