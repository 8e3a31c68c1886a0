# source: char-RNN tutorials with nn.RNNCell where the hidden state returned by the last step of a batch is fed into the next batch without detach ("Trying to backward through the graph a second time")
# family: D
# expect: error
# line: 37  (backward: 40)
# fix: cut the history at the start of every batch: hidden = hidden.detach()
import torch
import torch.nn as nn

torch.manual_seed(0)


class CharRNN(nn.Module):
    def __init__(self, n_chars=20, hidden=16):
        super().__init__()
        self.hidden_size = hidden
        self.embed = nn.Embedding(n_chars, hidden)
        self.cell = nn.RNNCell(hidden, hidden)
        self.out = nn.Linear(hidden, n_chars)

    def forward(self, char, hidden):
        hidden = self.cell(self.embed(char), hidden)
        return self.out(hidden), hidden

    def init_hidden(self, batch):
        return torch.zeros(batch, self.hidden_size)


def train(model, text, seq_len=5, batch=3):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    hidden = model.init_hidden(batch)
    for start in range(0, text.size(1) - seq_len, seq_len):
        inp = text[:, start:start + seq_len]
        tgt = text[:, start + 1:start + seq_len + 1]
        loss = 0
        for t in range(seq_len):
            output, hidden = model(inp[:, t], hidden)
            loss = loss + criterion(output, tgt[:, t])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item() / seq_len


if __name__ == "__main__":
    model = CharRNN()
    text = torch.randint(0, 20, (3, 21))
    print("loss", train(model, text))
