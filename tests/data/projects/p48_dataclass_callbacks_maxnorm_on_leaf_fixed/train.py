import torch
import torch.nn as nn

from callbacks import build_callbacks
from config import TrainConfig
from engine.trainer import Trainer


def main(cfg: TrainConfig):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(cfg.in_dim, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, cfg.num_classes))
    loader = [(torch.randn(cfg.batch_size, cfg.in_dim), torch.randint(0, cfg.num_classes, (cfg.batch_size,)))
              for _ in range(3)]
    trainer = Trainer(cfg, model, build_callbacks(cfg))
    trainer.fit(loader)


if __name__ == "__main__":
    main(TrainConfig())
