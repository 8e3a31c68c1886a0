import torch

from configs import CFG
from core.builder import build
from core.trainer import Trainer


def main():
    torch.manual_seed(0)
    model, criterion, optimizer = build(CFG)
    trainer = Trainer(model, criterion, optimizer, CFG["temperature_decay"])
    data = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(3)]
    trainer.train_epoch(data)


if __name__ == "__main__":
    main()
