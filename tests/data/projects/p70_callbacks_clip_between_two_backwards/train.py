import torch

from models.two_head import TwoHeadNet
from trainer.callbacks import WeightClipper
from trainer.trainer import Trainer

if __name__ == "__main__":
    torch.manual_seed(0)
    model = TwoHeadNet()
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8)) for _ in range(3)]
    Trainer(model, optimizer, callbacks=[WeightClipper()]).fit(batches)
