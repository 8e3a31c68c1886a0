# source: in-training channel pruning in the style of Network Slimming (BN-gamma based): a prune hook shrinks conv/BN parameters by assigning sliced tensors to .data (conv.weight.data = conv.weight.data[keep]) and is registered as an after-forward hook of the training iteration, i.e. runs after the loss is computed but before loss.backward(); the conv backward then meets weights of a different shape
# family: F
# expect: error
# line: 32, 33, 35, 43, 54, 59  (backward: 45)
# fix: prune between iterations (call prune() after run_iter has returned, when no graph refers to the parameters any more) instead of as an after-forward hook
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SlimNet(nn.Module):
    def __init__(self, c=8, n_cls=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, n_cls)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(x.mean((2, 3)))


def slim_block(conv, bn, next_conv, ratio):
    gamma = bn.weight.data.abs()
    n_keep = max(1, int(gamma.numel() * (1 - ratio)))
    keep = gamma.argsort(descending=True)[:n_keep].sort().values
    conv.weight.data = conv.weight.data[keep].clone()
    bn.weight.data, bn.bias.data = bn.weight.data[keep].clone(), bn.bias.data[keep].clone()
    bn.running_mean, bn.running_var = bn.running_mean[keep].clone(), bn.running_var[keep].clone()
    next_conv.weight.data = next_conv.weight.data[:, keep].clone()
    bn.num_features = conv.out_channels = next_conv.in_channels = n_keep


def run_iter(model, optimizer, batch, after_forward=()):
    x, y = batch
    loss = F.cross_entropy(model(x), y) + 1e-4 * model.bn1.weight.abs().sum()
    for hook in after_forward:
        hook()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def train(model, steps=3, prune_at=1):
    state = {"opt": torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)}

    def prune():
        slim_block(model.conv1, model.bn1, model.conv2, ratio=0.5)
        state["opt"] = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    for step in range(steps):
        batch = torch.randn(8, 3, 12, 12), torch.randint(0, 4, (8,))
        loss = run_iter(model, state["opt"], batch, after_forward=[prune] if step == prune_at else [])
        print("step", step, "loss %.4f" % loss, "channels", model.conv1.out_channels)


if __name__ == "__main__":
    train(SlimNet())
