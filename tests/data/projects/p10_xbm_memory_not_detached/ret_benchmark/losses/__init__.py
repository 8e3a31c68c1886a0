from .contrastive import ContrastiveLoss

LOSS = {"contrastive_loss": ContrastiveLoss}


def build_loss(cfg):
    return LOSS[cfg["LOSSES"]["NAME"]](cfg["LOSSES"]["MARGIN"])
