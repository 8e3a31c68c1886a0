# source: pytorch/tutorials cifar10_tutorial.py (running_loss += loss.item() for logging, loss.backward() on the tensor)
# family: G
# expect: ok
# line: 24
# fix: none needed - .item() is only used for the log; backward runs on the loss tensor
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 4))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    running_loss = 0.0
    for i in range(6):
        inputs, labels = torch.randn(4, 12), torch.randint(0, 4, (4,))
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 3 == 2:
            print(f"[{i + 1}] loss: {running_loss / 3:.3f}")
            running_loss = 0.0
