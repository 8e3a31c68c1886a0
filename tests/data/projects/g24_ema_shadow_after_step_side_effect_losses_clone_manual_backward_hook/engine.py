class Trainer:
    manual_backward = False

    def __init__(self, model, optimizer, ema):
        self.model, self.optimizer, self.ema = model, optimizer, ema

    def fit(self, loader):
        for batch in loader:
            self.optimizer.zero_grad()
            loss = self.training_step(batch)
            if not self.manual_backward:
                loss.backward()
            self.optimizer.step()
            self.ema.update(self.model)
        return loss


class ManualTrainer(Trainer):
    manual_backward = True

    def training_step(self, batch):
        from losses import total_loss
        loss = total_loss(self.model(batch))
        loss.backward()
        return loss
