import abc


class BaseTrainer(abc.ABC):
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    @abc.abstractmethod
    def compute_loss(self, batch):
        raise NotImplementedError

    def train_step(self, batch):
        loss = self.compute_loss(batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, loader):
        for i, batch in enumerate(loader):
            print(i, self.train_step(batch))
