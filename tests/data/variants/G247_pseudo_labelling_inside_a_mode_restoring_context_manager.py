# source: self-training loops that label the unlabelled batch with the model itself under a context manager that saves and restores the training flag (the 'evaluating(model)' helper common in PyTorch code bases), on a network whose auxiliary head runs only in training mode: the mode is restored after every labelling, so the auxiliary head trains
# family: G
# expect: ok
# line: 17
# fix: none needed: the context manager restores the mode it found
import contextlib
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@contextlib.contextmanager
def evaluating(model):
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


class AuxNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)
        self.aux_head = nn.Linear(32, 4)

    def forward(self, x):
        h = self.body(x)
        return (self.head(h), self.aux_head(h)) if self.training else self.head(h)


if __name__ == "__main__":
    model = AuxNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x_l, y_l, x_u = torch.randn(8, 10), torch.randint(0, 4, (8,)), torch.randn(16, 10)
    model.train()
    for step in range(3):
        with evaluating(model), torch.no_grad():
            pseudo = model(x_u).argmax(dim=-1)
        logits, aux = model(torch.cat([x_l, x_u]))
        loss = F.cross_entropy(logits, torch.cat([y_l, pseudo])) + 0.4 * F.cross_entropy(aux[:8], y_l)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("aux head trained:", model.aux_head.weight.grad is not None)
