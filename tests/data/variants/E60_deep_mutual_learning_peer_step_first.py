# source: Deep Mutual Learning (Zhang et al. 2018) re-implementations that run both peer networks once, then update peer 1 (CE + KL to peer 2) and afterwards backpropagate peer 2's loss, whose KL term goes through peer 1's undetached logits
# family: E
# expect: error
# line: 46  (backward: 49)
# fix: detach the peer's logits inside each KL term (kl_to(logits1, logits2.detach()) / kl_to(logits2, logits1.detach())), as the DML paper treats the peer prediction as a fixed target
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_peer():
    return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5))


def kl_to(student_logits, peer_logits):
    return F.kl_div(F.log_softmax(student_logits, dim=1), F.softmax(peer_logits, dim=1), reduction="batchmean")


class MutualTrainer:
    def __init__(self, n_peers=2, lr=0.1):
        self.peers = [make_peer() for _ in range(n_peers)]
        self.opts = [torch.optim.SGD(p.parameters(), lr=lr, momentum=0.9) for p in self.peers]

    def train_step(self, x, y):
        logits = [peer(x) for peer in self.peers]
        losses = []
        for i, out in enumerate(logits):
            others = [kl_to(out, logits[j]) for j in range(len(logits)) if j != i]
            losses.append(F.cross_entropy(out, y) + sum(others) / len(others))
        return logits, losses


if __name__ == "__main__":
    trainer = MutualTrainer()
    x = torch.randn(16, 12)
    y = torch.randint(0, 5, (16,))
    for it in range(2):
        logits, losses = trainer.train_step(x, y)
        loss1, loss2 = losses
        opt1, opt2 = trainer.opts

        opt1.zero_grad()
        loss1.backward(retain_graph=True)
        opt1.step()

        opt2.zero_grad()
        loss2.backward()
        opt2.step()
        print("iter", it, "loss1 %.4f loss2 %.4f" % (loss1.item(), loss2.item()))
