# source: SimSiam/BYOL-style training (facebookresearch/simsiam: symmetric negative-cosine loss over two views) with the projector's output read from a forward hook: the projector runs once per view and the hook stores into one slot, so both terms use the second view
# family: H
# expect: ok
# verify: the gradient of the symmetric loss is compared with the one computed from the projector's outputs taken directly
# line: 20
# fix: (fixed version of H77_siamese_projection_hook_keeps_only_the_second_view.py) append every call's output to the record (self.store.setdefault(self.key, []).append(output)) and read the views back in order
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Recorder:
    def __init__(self, module, store, key):
        self.store, self.key = store, key
        module.register_forward_hook(self)

    def __call__(self, module, inputs, output):
        self.store.setdefault(self.key, []).append(output)


def neg_cosine(p, z):
    return -F.cosine_similarity(p, z.detach(), dim=-1).mean()


if __name__ == "__main__":
    backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
    projector = nn.Linear(16, 8)
    predictor = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
    params = [*backbone.parameters(), *projector.parameters(), *predictor.parameters()]
    rec = Recorder(projector, {}, "proj")
    x = torch.randn(6, 10)
    view1, view2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    direct = [projector(backbone(v)) for v in (view1, view2)]
    rec.store.clear()
    for v in (view1, view2):
        projector(backbone(v))
    z1, z2 = rec.store.pop("proj")
    loss = 0.5 * neg_cosine(predictor(z1), z2) + 0.5 * neg_cosine(predictor(z2), z1)
    got = torch.autograd.grad(loss, params)
    d1, d2 = direct
    ref_loss = 0.5 * neg_cosine(predictor(d1), d2) + 0.5 * neg_cosine(predictor(d2), d1)
    ref = torch.autograd.grad(ref_loss, params)
    same = all(torch.allclose(g, r) for g, r in zip(got, ref))
    print("MATCH" if same else "MISMATCH: the hook kept only the second view, the loss compares it with itself")
