# source: https://github.com/chxy95/Deep-Mutual-Learning/issues/5 ("Trying to backward through the graph a second time": answer: "check whether the teacher model's output is detached from the graph"), peers kept in a list and updated one after the other from one forward pass
# family: E
# expect: ok
# line: 28  (backward: 31)
# fix: (fixed version of E107_deep_mutual_learning_peer_list_kl_not_detached.py) use the other peers' predictions as constant targets: F.softmax(outputs[j].detach(), dim=1)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_peer():
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))


if __name__ == "__main__":
    models = [make_peer() for _ in range(2)]
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in models]
    for it in range(2):
        x, y = torch.randn(16, 12), torch.randint(0, 5, (16,))
        outputs = [m(x) for m in models]
        for i in range(len(models)):
            ce_loss = F.cross_entropy(outputs[i], y)
            kl_loss = 0
            for j in range(len(models)):
                if i != j:
                    kl_loss = kl_loss + F.kl_div(F.log_softmax(outputs[i], dim=1), F.softmax(outputs[j].detach(), dim=1), reduction="batchmean")
            loss = ce_loss + kl_loss / (len(models) - 1)
            optimizers[i].zero_grad()
            loss.backward()
            optimizers[i].step()
        print("iter", it, "loss", loss.item())
