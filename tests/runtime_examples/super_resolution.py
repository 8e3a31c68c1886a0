"""pytorch/examples super_resolution in small: conv layers, in-place ReLU, PixelShuffle, Adam."""
import torch
import torch.nn as nn
import torch.nn.init as init


class Net(nn.Module):
    def __init__(self, upscale_factor=2):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(1, 16, 5, 1, 2)
        self.conv2 = nn.Conv2d(16, 16, 3, 1, 1)
        self.conv3 = nn.Conv2d(16, 8, 3, 1, 1)
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, 3, 1, 1)
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv4.weight)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
low, high = torch.rand(4, 2, 1, 8, 8), torch.rand(4, 2, 1, 16, 16)
for step in range(4):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(low[step]), high[step])
    loss.backward()
    optimizer.step()
    print("step %d loss %.6f" % (step, loss.item()))
