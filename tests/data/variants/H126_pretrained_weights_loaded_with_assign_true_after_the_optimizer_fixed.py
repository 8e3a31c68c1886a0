# source: fine-tuning scripts that load a checkpoint with load_state_dict(..., assign=True) (the meta-device / low-memory loading recipe) after the optimizer was built (issues "loss goes down in eval but weights never change"): assign=True replaces the module's Parameter objects, so the optimizer steps the old ones, which take no part in the forward
# family: H
# expect: ok
# verify: the first layer's weight is compared with the checkpoint after the SGD steps
# line: 22, 23  (backward: 29)
# fix: (fixed version of H126_pretrained_weights_loaded_with_assign_true_after_the_optimizer.py) build the optimizer after loading: move torch.optim.SGD(model.parameters(), ...) below load_state_dict
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_model():
    return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))


if __name__ == "__main__":
    pretrained = make_model()
    checkpoint = {k: v.clone() for k, v in pretrained.state_dict().items()}
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
