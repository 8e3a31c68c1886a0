import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, cfg, model, callbacks):
        self.cfg = cfg
        self.model = model
        self.callbacks = callbacks
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
        self.epoch, self.loss = 0, None

    def _call(self, hook):
        for cb in self.callbacks:
            getattr(cb, hook)(self)

    def fit(self, loader):
        self._call("on_train_start")
        for self.epoch in range(self.cfg.epochs):
            for x, y in loader:
                self.optimizer.zero_grad()
                self.loss = F.cross_entropy(self.model(x), y)
                self.loss.backward()
                self.optimizer.step()
                self._call("on_batch_end")
            self._call("on_epoch_end")
