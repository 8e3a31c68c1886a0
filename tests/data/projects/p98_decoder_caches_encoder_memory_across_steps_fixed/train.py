import torch
import torch.nn.functional as F

from model import Seq2Seq


def main():
    torch.manual_seed(0)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        src = torch.randint(0, 20, (4, 7))
        tgt = torch.randint(0, 20, (4, 6))
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 20), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()
