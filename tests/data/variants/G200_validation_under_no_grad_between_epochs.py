# source: pytorch/examples imagenet main.py (validate() runs the model under torch.no_grad() after each training epoch; training resumes with grad enabled)
# family: G
# expect: ok
# line: 16
# fix: none needed - the no_grad block only covers evaluation; the training loss is computed with grad enabled
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def validate(model, batches):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in batches:
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
            total += y.numel()
    return correct / total


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(3)]
    val = [(torch.randn(8, 10), torch.randint(0, 3, (8,)))]
    for epoch in range(2):
        model.train()
        for x, y in train:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "acc", validate(model, val))
