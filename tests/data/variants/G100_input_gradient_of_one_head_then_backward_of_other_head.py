# source: torch.autograd.grad(loss, inputs) without retain_graph frees only the nodes on the path to `inputs` (graph-lifetime issue notes); a saliency term of the auxiliary head is taken with respect to the shared features, then the main head's loss is backpropagated through the backbone, whose nodes autograd.grad never ran
# family: G
# expect: ok
# line: 28
# fix: none needed - the second backward does not reach any node that the autograd.grad call executed
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TwoHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
        self.aux_head = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))
        self.main_head = nn.Linear(32, 4)


if __name__ == "__main__":
    net = TwoHeadNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(2):
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        feats = net.backbone(x)
        aux_loss = F.cross_entropy(net.aux_head(feats), y)
        (feat_grad,) = torch.autograd.grad(aux_loss, feats)
        saliency = feat_grad.abs().mean(0)
        loss = F.cross_entropy(net.main_head(feats), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item(), "top feature", saliency.argmax().item())
