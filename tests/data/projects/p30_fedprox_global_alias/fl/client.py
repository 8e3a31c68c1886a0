"""A FedProx client (after litian96/FedProx and its PyTorch ports): local SGD with a proximal term."""
import torch
import torch.nn.functional as F


class Client:
    def __init__(self, model, data, mu=0.5, lr=0.05):
        self.model, self.data, self.mu = model, data, mu
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def receive(self, global_model):
        self.model.load_state_dict(global_model.state_dict())
        self.global_weights = [w.detach() for w in self.model.parameters()]

    def proximal(self):
        return sum(((w - w0) ** 2).sum() for w, w0 in zip(self.model.parameters(), self.global_weights))

    def local_update(self, epochs=2):
        for _ in range(epochs):
            for x, y in self.data:
                self.optimizer.zero_grad()
                loss = F.cross_entropy(self.model(x), y) + self.mu / 2 * self.proximal()
                loss.backward()
                self.optimizer.step()
