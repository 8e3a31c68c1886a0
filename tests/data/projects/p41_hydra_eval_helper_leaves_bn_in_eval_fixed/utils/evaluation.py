import torch


def evaluate(model, batches):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in batches:
            correct += (model(x).argmax(-1) == y).sum().item()
            total += len(y)
    return correct / total
