# source: low-memory checkpoint loading with load_state_dict(..., assign=True) done before the optimizer is built (the order the recipe asks for)
# family: G
# expect: ok
# line: 17
# fix: none needed: the optimizer is built over the assigned parameters
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_model():
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))


if __name__ == "__main__":
    checkpoint = {k: v.clone() for k, v in make_model().state_dict().items()}
    model = make_model()
    model.load_state_dict(checkpoint, assign=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
    start = checkpoint["0.weight"].clone()
    for _ in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())
    print("MISMATCH: the model never moved" if torch.equal(model[0].weight, start) else "MATCH")
