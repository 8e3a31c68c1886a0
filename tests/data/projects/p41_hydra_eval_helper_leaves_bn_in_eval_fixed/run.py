import torch
import torch.nn.functional as F

from conf.dictconfig import compose
from engine.model import MLP
from engine.trainer import Trainer


def main(cfg):
    torch.manual_seed(0)
    model = MLP(**cfg.model)
    data = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
    trainer = Trainer(cfg, model, data[:2], data[2:])
    trainer.fit()

    x, y, state, got = trainer.last_step  # the gradient the last training step used
    reference = MLP(**cfg.model)
    reference.load_state_dict(state)
    reference.train()
    ref = torch.autograd.grad(F.cross_entropy(reference(x), y), list(reference.parameters()))
    ok = all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: training steps after a validation run with BatchNorm in eval mode")


if __name__ == "__main__":
    main(compose())
