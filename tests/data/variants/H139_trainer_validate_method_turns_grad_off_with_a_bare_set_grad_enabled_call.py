# source: Trainer classes whose validate() method calls torch.set_grad_enabled(False) as a statement (forum threads "element 0 of tensors does not require grad and does not have a grad_fn" in the second epoch): grad mode is global and stays off after the method returns, so the next epoch's backward raises
# family: H
# expect: error
# line: 27  (backward: 21)
# fix: scope the switch: with torch.set_grad_enabled(False): around the evaluation
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss.item()

    def validate(self, x, y):
        self.model.eval()
        torch.set_grad_enabled(False)
        err = F.mse_loss(self.model(x), y).item()
        self.model.train()
        return err


if __name__ == "__main__":
    trainer = Trainer(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for epoch in range(2):
        trainer.train_step(x, y)
        print("epoch", epoch, "val %.3f" % trainer.validate(x, y))
