# source: "The Annotated Transformer" LabelSmoothing: true_dist = x.data.clone(); true_dist.fill_(...); true_dist.scatter_(...); true_dist[:, pad] = 0; index_fill_ for padded rows
# family: G
# expect: ok
# line: 23, 24, 25, 28  (backward: 37)
# fix: none needed - every in-place write targets true_dist, a fresh copy made from x.data that does not require grad and that no backward saved before the writes
import torch
import torch.nn as nn

torch.manual_seed(0)


class LabelSmoothing(nn.Module):
    def __init__(self, size, padding_idx, smoothing=0.1):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx = padding_idx
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.size = size

    def forward(self, x, target):
        true_dist = x.data.clone()
        true_dist.fill_(self.smoothing / (self.size - 2))
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        mask = torch.nonzero(target.data == self.padding_idx)
        if mask.dim() > 0:
            true_dist.index_fill_(0, mask.squeeze(), 0.0)
        return self.criterion(x, true_dist.clone().detach())


if __name__ == "__main__":
    generator = nn.Sequential(nn.Linear(8, 6), nn.LogSoftmax(dim=-1))
    crit = LabelSmoothing(6, padding_idx=0, smoothing=0.2)
    x, target = torch.randn(5, 8), torch.tensor([2, 1, 0, 3, 5])
    loss = crit(generator(x), target)
    loss.backward()
    print("loss", loss.item())
