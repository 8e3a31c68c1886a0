from .base import Callback


class LossLogger(Callback):
    def on_train_start(self, trainer):
        self.history = []

    def on_batch_end(self, trainer):
        self.history.append(trainer.loss.item())

    def on_epoch_end(self, trainer):
        print("epoch", trainer.epoch, "mean loss", sum(self.history) / len(self.history))
        self.history = []
