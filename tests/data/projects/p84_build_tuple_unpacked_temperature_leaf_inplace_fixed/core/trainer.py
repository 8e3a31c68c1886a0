import torch


class Trainer:
    def __init__(self, model, criterion, optimizer, decay):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.decay = decay

    def train_epoch(self, data):
        for x, y in data:
            loss = self.criterion(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            with torch.no_grad():
                self.model.temperature.mul_(self.decay)
            print(loss.item())
