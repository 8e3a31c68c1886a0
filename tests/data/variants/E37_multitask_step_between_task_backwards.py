# source: multi-task dense-prediction loops (segmentation + depth) that step the shared optimizer after the first task's backward(retain_graph=True) and then backpropagate the second task through the same encoder graph
# family: E
# expect: error
# line: 35  (backward: 37)
# fix: backward all task losses (or their weighted sum) first, then call optimizer.step() once
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                     nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.seg_head = nn.Conv2d(8, n_cls, 1)
        self.depth_head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        feat = self.encoder(x)
        return self.seg_head(feat), self.depth_head(feat)


if __name__ == "__main__":
    model = MultiTaskNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    img = torch.randn(2, 3, 8, 8)
    seg_gt, depth_gt = torch.randint(0, 3, (2, 8, 8)), torch.rand(2, 1, 8, 8)
    seg, depth = model(img)
    task_losses = [F.cross_entropy(seg, seg_gt), F.l1_loss(depth, depth_gt)]
    optimizer.zero_grad()
    task_losses[0].backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
    task_losses[1].backward()
    optimizer.step()
    print([l.item() for l in task_losses])
