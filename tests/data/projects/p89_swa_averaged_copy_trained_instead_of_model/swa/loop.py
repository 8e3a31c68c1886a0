import torch.nn.functional as F


def train_epoch(model, swa_model, optimizer, data):
    for x, y in data:
        loss = F.mse_loss(swa_model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        swa_model.update_parameters(model)
        print(loss.item())
