# source: fine-tuning scripts that give a new head its own learning rate with optimizer.add_param_group and clear gradients by hand over optimizer.param_groups[0] (set_to_none by a loop, forum threads "head diverges after a few steps"): the head's group is never cleared, so its gradients accumulate across steps
# family: H
# expect: silent
# verify: after one more clearing and backward, the head's gradient is compared with a fresh gradient of the same loss
# line: 15, 16  (backward: 28)
# fix: clear every group: opt.zero_grad(set_to_none=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def clear_grads(opt):
    for p in opt.param_groups[0]["params"]:
        p.grad = None


if __name__ == "__main__":
    backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
    head = nn.Linear(16, 4)
    opt = torch.optim.SGD(backbone.parameters(), lr=0.05)
    opt.add_param_group({"params": head.parameters(), "lr": 0.1})
    x, y = torch.randn(20, 10), torch.randint(0, 4, (20,))
    for step in range(4):
        clear_grads(opt)
        loss = F.cross_entropy(head(backbone(x)), y)
        loss.backward()
        opt.step()
    print("loss %.4f" % loss.item())
    clear_grads(opt)
    F.cross_entropy(head(backbone(x)), y).backward()
    fresh = torch.autograd.grad(F.cross_entropy(head(backbone(x)), y), head.weight)[0]
    print("MISMATCH: the head's gradient accumulated" if not torch.allclose(head.weight.grad, fresh) else "MATCH")
