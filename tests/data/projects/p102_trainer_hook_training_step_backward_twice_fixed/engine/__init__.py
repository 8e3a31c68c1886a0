from .base import Trainer
