# source: InfoNCE with a learnable temperature kept beside the model (as in CLIP-style and MoCo-style code), in the model.zero_grad()-vs-optimizer.zero_grad() confusion users report: the temperature is in the optimizer but the loop calls model.zero_grad(), so its gradient accumulates over every step while the model's is cleared
# family: H
# expect: silent
# verify: the temperature's .grad at the last step is compared with the gradient of that step's loss alone (lr 0, so the parameters stay where every gradient was taken)
# line: 27
# fix: clear every gradient the optimizer holds: optimizer.zero_grad()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def info_nce(q, k, log_tau):
    logits = F.normalize(q, dim=1) @ F.normalize(k, dim=1).t() / log_tau.exp()
    return F.cross_entropy(logits, torch.arange(q.shape[0]))


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
    log_tau = nn.Parameter(torch.tensor(-2.0))
    optimizer = torch.optim.SGD([*model.parameters(), log_tau], lr=0.0)
    for step in range(4):
        x = torch.randn(8, 10)
        q, k = model(x + 0.05 * torch.randn_like(x)), model(x + 0.05 * torch.randn_like(x))
        loss = info_nce(q, k, log_tau)
        model.zero_grad()
        loss.backward()
        optimizer.step()
    this_step = torch.autograd.grad(info_nce(q, k, log_tau), log_tau)[0]
    print("log_tau.grad %.5f, this step's gradient %.5f" % (log_tau.grad.item(), this_step.item()))
    print("MATCH" if torch.allclose(log_tau.grad, this_step) else "MISMATCH: the temperature's gradient accumulated over every step")
