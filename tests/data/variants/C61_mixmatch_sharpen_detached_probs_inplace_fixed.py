# source: MixMatch / UDA-style consistency training where the guessed label is sharpened by an in-place helper applied to probs.detach(); detach() shares storage and version counter with the softmax output that autograd saved
# family: C
# expect: ok
# line: 14, 28  (backward: 32)
# fix: (fixed version of C61_mixmatch_sharpen_detached_probs_inplace.py) sharpen a copy: targets = sharpen_(probs_u.detach().clone(), T)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sharpen_(p, T):
    p.pow_(1.0 / T)
    p.div_(p.sum(dim=1, keepdim=True))
    return p


class SemiSupervisedTrainer:
    def __init__(self, model, lr=1e-2, T=0.5, lambda_u=1.0):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.T, self.lambda_u = T, lambda_u

    def step(self, x_l, y_l, x_u):
        loss_x = F.cross_entropy(self.model(x_l), y_l)
        probs_u = F.softmax(self.model(x_u + 0.05 * torch.randn_like(x_u)), dim=1)
        targets = sharpen_(probs_u.detach().clone(), self.T)
        loss_u = F.mse_loss(probs_u, targets)
        loss = loss_x + self.lambda_u * loss_u
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 4))
    trainer = SemiSupervisedTrainer(net)
    x_l, y_l = torch.randn(8, 12), torch.randint(0, 4, (8,))
    x_u = torch.randn(16, 12)
    print("loss", trainer.step(x_l, y_l, x_u))
