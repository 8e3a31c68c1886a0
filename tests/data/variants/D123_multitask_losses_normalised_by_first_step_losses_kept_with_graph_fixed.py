# source: multi-task loss balancing by the ratio to the initial losses (GradNorm's L_i(t)/L_i(0), loss-normalisation schemes in multi-task repositories): the first step's task losses are stored as the reference without .detach(), so from the second step on the normalised loss backpropagates into the first step's freed graph and raises 'Trying to backward through the graph a second time'
# family: D
# expect: ok
# line: 35  (backward: 38)
# fix: (fixed version of D123_multitask_losses_normalised_by_first_step_losses_kept_with_graph.py) store the reference losses detached: initial_losses = task_losses.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.depth_head = nn.Linear(32, 1)
        self.seg_head = nn.Linear(32, 3)

    def forward(self, x):
        h = self.trunk(x)
        return self.depth_head(h), self.seg_head(h)


if __name__ == "__main__":
    model = TwoHeadNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    initial_losses = None
    for step in range(3):
        x = torch.randn(16, 10)
        depth_gt, seg_gt = torch.randn(16, 1), torch.randint(0, 3, (16,))
        depth, seg = model(x)
        task_losses = torch.stack([F.l1_loss(depth, depth_gt), F.cross_entropy(seg, seg_gt)])
        if initial_losses is None:
            initial_losses = task_losses.detach()
        loss = (task_losses / initial_losses).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "normalised loss %.4f" % loss.item())
