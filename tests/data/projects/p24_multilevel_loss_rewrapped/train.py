import copy

import torch
import torch.nn.functional as F

from configs import base as cfg
from det.head import MultiLevelHead
from det.losses import build_loss


def make_batch(generator):
    feats = [torch.randn(2, cfg.MODEL["channels"], s, s, generator=generator) for s in cfg.LEVELS]
    cls_t = [(torch.rand(2, cfg.MODEL["num_classes"], s, s, generator=generator) > 0.8).float() for s in cfg.LEVELS]
    box_t = [torch.rand(2, 4, s, s, generator=generator) for s in cfg.LEVELS]
    return feats, cls_t, box_t


def grad_or_zero(p):
    return p.grad if p.grad is not None else torch.zeros_like(p)


def reference_box_loss(preds, targets, beta):
    return torch.stack([F.smooth_l1_loss(p, t, beta=beta) for p, t in zip(preds, targets)]).mean()


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    head = MultiLevelHead(**cfg.MODEL)
    loss_cls, loss_box = build_loss(cfg.LOSS_CLS), build_loss(cfg.LOSS_BOX)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
    feats, cls_t, box_t = make_batch(gen)
    probe = copy.deepcopy(head)
    cls_out, box_out = head(feats)
    loss = sum(loss_cls(c, t) for c, t in zip(cls_out, cls_t)) + loss_box(box_out, box_t)
    optimizer.zero_grad()
    loss.backward()
    cls_ref, box_ref = probe(feats)
    ref = sum(loss_cls(c, t) for c, t in zip(cls_ref, cls_t)) + reference_box_loss(box_ref, box_t, 0.11)
    ref.backward()
    ok = all(torch.allclose(grad_or_zero(a), grad_or_zero(b), atol=1e-6)
             for a, b in zip(head.parameters(), probe.parameters()))
    optimizer.step()
    print("MATCH" if ok else "MISMATCH: the box branch receives no gradient")


if __name__ == "__main__":
    main()
