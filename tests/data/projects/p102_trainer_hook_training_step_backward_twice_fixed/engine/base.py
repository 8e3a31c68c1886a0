class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def training_step(self, batch):
        raise NotImplementedError

    def fit(self, loader, epochs=1):
        for _ in range(epochs):
            for batch in loader:
                self.optimizer.zero_grad()
                loss = self.training_step(batch)
                loss.backward()
                self.optimizer.step()
        return loss
