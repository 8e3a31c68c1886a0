from torch.optim.swa_utils import AveragedModel


def wrap_swa(model):
    return AveragedModel(model)
