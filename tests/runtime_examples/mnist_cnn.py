"""pytorch/examples mnist in small: fake 28x28 data through a DataLoader with two worker
processes, the same CNN (conv, dropout, max-pool, log-softmax), Adadelta and StepLR."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


if __name__ == "__main__":
    torch.manual_seed(1)
    data = TensorDataset(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,)))
    loader = DataLoader(data, batch_size=16, num_workers=2)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(2):
        model.train()
        for batch, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
            print("epoch %d batch %d loss %.6f" % (epoch, batch, loss.item()))
        scheduler.step()
    model.eval()
    with torch.no_grad():
        print("eval %.6f" % F.nll_loss(model(data.tensors[0]), data.tensors[1]).item())
