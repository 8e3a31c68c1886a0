# source: "set LSTM forget-gate bias to 1" snippets (Jozefowicz et al. trick) applied to the bias Parameter slice outside torch.no_grad()
# family: A
# expect: error
# line: 23
# fix: wrap the bias initialisation in `with torch.no_grad():` (or write to p.data[h:2 * h])
import torch
import torch.nn as nn

torch.manual_seed(0)


class SeqEncoder(nn.Module):
    def __init__(self, n_in=6, hidden=8, n_out=2):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_out)
        self._init_forget_bias()

    def _init_forget_bias(self):
        h = self.lstm.hidden_size
        for name, p in self.lstm.named_parameters():
            if "bias" in name:
                p[h:2 * h].fill_(1.0)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


if __name__ == "__main__":
    model = SeqEncoder()
    x, y = torch.randn(4, 5, 6), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    print("loss", loss.item())
