"""pytorch/examples mnist_hogwild in small: a model in shared memory trained by two processes
(torch.multiprocessing, fork), then evaluated in the main process."""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(rank, model, data, targets):
    torch.manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    for i in range(5):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data[rank]), targets[rank])
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Net()
    model.share_memory()
    data, targets = torch.randn(2, 32, 20), torch.randint(0, 4, (2, 32))
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model, data, targets))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    print("exit codes", [p.exitcode for p in processes])
    with torch.no_grad():
        loss = F.nll_loss(model(data.view(-1, 20)), targets.view(-1))
    print("trained", bool(loss.item() < 10.0))
