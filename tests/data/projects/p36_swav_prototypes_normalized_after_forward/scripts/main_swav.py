import copy
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch  # noqa: E402

from swavlite import SwAVModel  # noqa: E402
from swavlite.train_step import swav_loss, train_one_iter  # noqa: E402


def reference_grads(model, views):
    """SwAV's order: the prototypes are normalized before the forward that uses them."""
    with torch.no_grad():
        w = model.prototypes.weight
        w.copy_(torch.nn.functional.normalize(w, dim=1, p=2))
    _, output = model(torch.cat(views))
    loss = swav_loss(output, views[0].shape[0])
    return torch.autograd.grad(loss, list(model.backbone.parameters()))


def main():
    torch.manual_seed(0)
    model = SwAVModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ok = True
    for it in range(3):
        x = torch.randn(6, 12)
        views = [x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)]
        probe = copy.deepcopy(model)
        loss, grads = train_one_iter(model, optimizer, views)
        ref = reference_grads(probe, views)
        ok = ok and all(torch.allclose(g, r, atol=1e-5) for g, r in zip(grads, ref))
        print("iter", it, "loss", round(loss, 4))
    print("MATCH" if ok else "MISMATCH: the backbone's gradient is not the gradient of the loss computed")


if __name__ == "__main__":
    main()
