import torch
import torch.nn as nn

from engine.train_one_epoch import train_one_epoch
from timm_lite.model_ema import ModelEmaV2
from timm_lite.models import create_model

ARGS = {"model": "mlp_mixer_tiny", "num_classes": 3, "lr": 1e-3, "model_ema_decay": 0.99, "epochs": 2}


def main(args):
    torch.manual_seed(0)
    model = create_model(args["model"], args["num_classes"])
    model_ema = ModelEmaV2(model, decay=args["model_ema_decay"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args["lr"])
    loader = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
    for epoch in range(args["epochs"]):
        loss = train_one_epoch(model, loader, nn.CrossEntropyLoss(), optimizer, model_ema)
        print(f"epoch {epoch}: loss {loss:.4f}")


if __name__ == "__main__":
    main(ARGS)
