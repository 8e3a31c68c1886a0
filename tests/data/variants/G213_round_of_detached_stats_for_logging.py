# source: training loops that round metrics of the output for logging; rounding a detached value or a value outside the loss touches no gradient (a correct use)
# family: G
# expect: ok
# line: 20
# fix: (correct code)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    before = model.weight.detach().clone()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    shown = torch.round(loss.detach() * 1000) / 1000
    conf = logits.softmax(-1).max(-1).values.round()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", shown.item(), conf.sum().item())
    print("MATCH" if not torch.equal(before, model.weight) else "MISMATCH: no update")
