# source: https://github.com/weizheliu/People-Flows/issues/7 ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn" in a crowd-counting train.py); here the predicted count is rounded and cast to an integer count before the L1 loss
# family: H
# expect: error
# line: 28  (backward: 31)
# fix: compare the continuous count with the ground truth (drop .round().long(); round only for reporting)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DensityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1), nn.ReLU())

    def forward(self, img):
        return self.body(img)


if __name__ == "__main__":
    model = DensityNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.95)
    for step in range(2):
        img, gt_count = torch.rand(4, 3, 16, 16), torch.randint(5, 50, (4,)).float()
        density = model(img)
        pred_count = density.sum(dim=(1, 2, 3)).round().long()
        loss = F.l1_loss(pred_count.float(), gt_count)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "mae", loss.item())
