import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch  # noqa: E402

from swavlite import SwAVModel  # noqa: E402
from swavlite.train_step import swav_loss, train_one_iter  # noqa: E402


def reference_grads(model, views, loss_value):
    """Autograd's gradient of the loss the step computed: of the two weights the forward may have
    used (as they were, or normalized first), the one that gives the step's loss."""
    for normalize_first in (False, True):
        probe = copy.deepcopy(model)
        if normalize_first:
            with torch.no_grad():
                w = probe.prototypes.weight
                w.copy_(torch.nn.functional.normalize(w, dim=1, p=2))
        _, output = probe(torch.cat(views))
        loss = swav_loss(output, views[0].shape[0])
        if abs(loss.item() - loss_value) < 1e-6:
            return torch.autograd.grad(loss, list(probe.backbone.parameters()))
    raise AssertionError("the step's loss is neither")


def main():
    torch.manual_seed(0)
    model = SwAVModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ok = True
    for it in range(3):
        x = torch.randn(6, 12)
        views = [x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)]
        before = copy.deepcopy(model)
        loss, grads = train_one_iter(model, optimizer, views)
        ref = reference_grads(before, views, loss)
        ok = ok and all(torch.allclose(g, r, atol=1e-5) for g, r in zip(grads, ref))
        print("iter", it, "loss", round(loss, 4))
    print("MATCH" if ok else "MISMATCH: the backbone's gradient is not the gradient of the loss the step computed")


if __name__ == "__main__":
    main()
