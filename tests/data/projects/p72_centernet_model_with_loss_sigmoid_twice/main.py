import torch

from models.losses import CtdetLoss
from models.net import CenterNetLite
from utils.wrappers import ModelWithLoss

opt = {"heads": {"hm": 2, "wh": 2}, "hm_weight": 1.0, "wh_weight": 0.1, "lr": 1e-3, "num_iters": 3}


def make_batch():
    hm = torch.zeros(2, 2, 8, 8)
    hm[:, 0, 3, 4] = 1.0
    return {"input": torch.randn(2, 3, 8, 8), "hm": hm, "wh": torch.rand(2, 2, 8, 8)}


def main():
    torch.manual_seed(0)
    model = CenterNetLite(opt["heads"])
    model_with_loss = ModelWithLoss(model, CtdetLoss(opt))
    optimizer = torch.optim.Adam(model.parameters(), opt["lr"])
    for it in range(opt["num_iters"]):
        output, loss, loss_stats = model_with_loss(make_batch())
        loss = loss.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(it, {k: round(v.item(), 4) for k, v in loss_stats.items()})


if __name__ == "__main__":
    main()
