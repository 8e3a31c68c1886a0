import torch.nn.functional as F

from engine import Trainer


class RegressionTrainer(Trainer):
    def training_step(self, batch):
        x, y = batch
        pred = self.model(x)
        loss = F.mse_loss(pred, y)
        loss.backward()
        return loss
