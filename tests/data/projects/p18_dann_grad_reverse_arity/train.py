import torch
import torch.nn.functional as F

from models.dann import DANN
from utils.schedule import grl_alpha


def main(steps=2):
    torch.manual_seed(0)
    model = DANN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step in range(steps):
        src_x, src_y = torch.randn(8, 12), torch.randint(0, 3, (8,))
        tgt_x = torch.randn(8, 12) + 0.5
        alpha = grl_alpha(step, steps)
        cls_out, dom_src = model(src_x, alpha)
        _, dom_tgt = model(tgt_x, alpha)
        loss = F.cross_entropy(cls_out, src_y)
        loss = loss + F.cross_entropy(dom_src, torch.zeros(8, dtype=torch.long))
        loss = loss + F.cross_entropy(dom_tgt, torch.ones(8, dtype=torch.long))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
