import torch
import torch.nn as nn


def _sigmoid(x):
    y = torch.clamp(x.sigmoid_(), min=1e-4, max=1 - 1e-4)
    return y


def _neg_loss(pred, gt):
    pos = gt.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * torch.pow(1 - gt, 4) * neg
    num_pos = pos.sum().clamp(min=1)
    return -(pos_loss.sum() + neg_loss.sum()) / num_pos


class CtdetLoss(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.crit_reg = nn.L1Loss()

    def forward(self, outputs, batch):
        output = outputs[0]
        output["hm"] = _sigmoid(output["hm"])
        hm_loss = _neg_loss(output["hm"], batch["hm"])
        wh_loss = self.crit_reg(output["wh"], batch["wh"])
        loss = self.opt["hm_weight"] * hm_loss + self.opt["wh_weight"] * wh_loss
        return loss, {"loss": loss, "hm_loss": hm_loss, "wh_loss": wh_loss}
