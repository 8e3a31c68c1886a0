from .loop import train_epoch
