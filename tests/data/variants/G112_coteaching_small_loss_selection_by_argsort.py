# source: Co-teaching (bhanML/Co-teaching loss_coteaching): each network ranks the batch by its per-sample loss with argsort and the peer is trained on the other's small-loss samples; the ranking uses loss values only
# family: G
# expect: ok
# line: 15
# fix: none needed - the peer's loss is only used to pick indices; each network's backward goes through its own graph once
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def loss_coteaching(y_1, y_2, t, forget_rate):
    loss_1 = F.cross_entropy(y_1, t, reduction="none")
    ind_1_sorted = torch.argsort(loss_1.data)
    loss_2 = F.cross_entropy(y_2, t, reduction="none")
    ind_2_sorted = torch.argsort(loss_2.data)
    num_remember = int((1 - forget_rate) * len(t))
    ind_1_update, ind_2_update = ind_1_sorted[:num_remember], ind_2_sorted[:num_remember]
    return F.cross_entropy(y_1[ind_2_update], t[ind_2_update]), F.cross_entropy(y_2[ind_1_update], t[ind_1_update])


if __name__ == "__main__":
    net1 = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    net2 = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    opt1, opt2 = torch.optim.Adam(net1.parameters(), lr=1e-3), torch.optim.Adam(net2.parameters(), lr=1e-3)
    for it in range(3):
        x, t = torch.randn(16, 10), torch.randint(0, 4, (16,))
        loss_1, loss_2 = loss_coteaching(net1(x), net2(x), t, forget_rate=0.25)
        opt1.zero_grad()
        loss_1.backward()
        opt1.step()
        opt2.zero_grad()
        loss_2.backward()
        opt2.step()
        print("iter", it, loss_1.item(), loss_2.item())
