class Callback:
    """Hooks the trainer calls; each receives the trainer itself."""

    def __init__(self, cfg):
        self.cfg = cfg

    def on_train_start(self, trainer):
        pass

    def on_batch_end(self, trainer):
        pass

    def on_epoch_end(self, trainer):
        pass
