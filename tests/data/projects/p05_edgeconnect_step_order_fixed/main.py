import random

import torch

from src.config import Config
from src.edge_connect import EdgeConnect


def main():
    config = Config()
    torch.manual_seed(10)
    random.seed(10)
    model = EdgeConnect(config)
    model.train()


if __name__ == "__main__":
    main()
