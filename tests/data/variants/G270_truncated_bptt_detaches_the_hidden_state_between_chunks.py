# source: truncated backpropagation through time over a long sequence (the word_language_model example's repackage_hidden shape, with an RNNCell unrolled by hand): the hidden state is detached between chunks, never inside one, so each chunk's loss reaches every step of its chunk
# family: G
# expect: ok
# verify: the input's gradient at the first step of the last chunk is compared with zero
# line: 32
# fix: none needed: the cut is between chunks
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SeqRegressor(nn.Module):
    def __init__(self, d_in=3, d_h=6):
        super().__init__()
        self.cell = nn.RNNCell(d_in, d_h)
        self.head = nn.Linear(d_h, 1)

    def forward(self, x, h):
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
        return self.head(h), h


if __name__ == "__main__":
    model = SeqRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    h = torch.zeros(4, 6)
    for chunk in range(2):
        x = torch.randn(4, 5, 3, requires_grad=True)
        h = h.detach()
        pred, h = model(x, h)
        loss = F.mse_loss(pred, x.detach().sum(dim=(1, 2)).unsqueeze(1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("MISMATCH: only the last step is backpropagated" if x.grad[:, 0].abs().sum() == 0 else "MATCH")
