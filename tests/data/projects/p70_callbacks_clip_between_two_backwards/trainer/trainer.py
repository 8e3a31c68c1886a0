import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, callbacks=()):
        self.model, self.optimizer, self.callbacks = model, optimizer, list(callbacks)

    def training_step(self, x, y_cls, y_reg):
        logits, reg = self.model(x)
        self.optimizer.zero_grad()
        cls_loss = F.cross_entropy(logits, y_cls)
        cls_loss.backward(retain_graph=True)
        for cb in self.callbacks:
            cb.on_after_backward(self.model)
        reg_loss = F.mse_loss(reg.squeeze(1), y_reg)
        reg_loss.backward()
        self.optimizer.step()
        return cls_loss.item() + reg_loss.item()

    def fit(self, batches):
        for step, (x, y_cls, y_reg) in enumerate(batches):
            print(step, self.training_step(x, y_cls, y_reg))
