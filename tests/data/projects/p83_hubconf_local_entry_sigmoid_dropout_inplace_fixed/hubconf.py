dependencies = ["torch"]

from nets.gate import GatedMLP


def gated_mlp(pretrained=False, **kwargs):
    model = GatedMLP(**kwargs)
    return model
