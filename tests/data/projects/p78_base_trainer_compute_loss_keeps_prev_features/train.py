import torch
import torch.nn as nn

from trainers.temporal import TemporalConsistencyTrainer


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.fc = nn.Linear(32, 3)

    def embed(self, x):
        return self.encoder(x)

    def classify(self, emb):
        return self.fc(emb)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(3)]
    TemporalConsistencyTrainer(model, optimizer).fit(loader)
