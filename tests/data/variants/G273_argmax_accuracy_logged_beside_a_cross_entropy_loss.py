# source: classification loops that compute accuracy from logits.argmax(1) next to the cross-entropy loss: the argmax feeds only a logged number, the loss keeps its graph
# family: G
# expect: ok
# verify: the first layer's weight is compared before and after the steps
# line: 23
# fix: none needed: argmax is used for the metric only
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(30, 6), torch.randint(0, 3, (30,))
    before = model[0].weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(1) == y).float().mean()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f acc %.2f" % (loss.item(), acc.item()))
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")
