import copy

import torch
import torch.nn.functional as F

from utils.evaluation import evaluate


class Trainer:
    def __init__(self, cfg, model, train_batches, val_batches):
        self.cfg, self.model = cfg, model
        self.train_batches, self.val_batches = train_batches, val_batches
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.trainer.lr)
        self.last_step = None

    def fit(self):
        self.model.train()
        for step in range(self.cfg.trainer.max_steps):
            x, y = self.train_batches[step % len(self.train_batches)]
            state = copy.deepcopy(self.model.state_dict())
            loss = F.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.last_step = (x, y, state, [p.grad.clone() for p in self.model.parameters()])
            self.optimizer.step()
            if (step + 1) % self.cfg.trainer.val_every == 0:
                print("step", step, "val acc", evaluate(self.model, self.val_batches))
