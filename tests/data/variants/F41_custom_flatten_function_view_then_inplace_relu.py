# source: model-conversion code with a custom Flatten autograd.Function returning x.view(...) followed by an in-place ReLU ("Output 0 of FlattenBackward is a view and is being modified inplace. This view was created inside a custom Function")
# family: F
# expect: error
# line: 32
# fix: return a new tensor from the Function (x.reshape(...).clone()) or make the following activation out-of-place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FlattenFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.view(x.size(0), -1)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.reshape(ctx.shape)


class ConvNet(nn.Module):
    def __init__(self, n_cls=5):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.fc = nn.Linear(4 * 4 * 4, n_cls)

    def forward(self, x):
        h = FlattenFn.apply(self.conv(x))
        F.relu(h, inplace=True)
        return self.fc(h)


if __name__ == "__main__":
    net = ConvNet()
    loss = F.cross_entropy(net(torch.randn(2, 3, 6, 6)), torch.tensor([1, 4]))
    loss.backward()
    print("loss", loss.item())
