def train_one_epoch(model, loader, criterion, optimizer, model_ema=None):
    model.train()
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if model_ema is not None:
            model_ema.update(model)
    return loss.item()
