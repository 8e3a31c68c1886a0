from .multitask_net import MultiTaskNet
