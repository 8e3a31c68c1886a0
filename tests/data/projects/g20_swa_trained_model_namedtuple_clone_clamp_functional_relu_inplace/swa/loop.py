import torch


def train_epoch(model, swa_model, criterion, optimizer, data):
    for x, y in data:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        swa_model.update_parameters(model)
        print(loss.item())


@torch.no_grad()
def evaluate(swa_model, criterion, data):
    return sum(criterion(swa_model(x), y).item() for x, y in data)
