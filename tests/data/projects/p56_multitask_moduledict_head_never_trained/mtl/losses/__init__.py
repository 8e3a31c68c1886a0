from .multitask_loss import MultiTaskLoss
