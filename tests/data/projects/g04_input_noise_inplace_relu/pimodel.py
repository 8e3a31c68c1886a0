import torch
import torch.nn.functional as F

import config
from data.augment import add_input_noise_, random_translate_
from nets import build_net


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = build_net(config.NET)
    optimizer = torch.optim.SGD(model.parameters(), lr=config.TRAIN["lr"], momentum=0.9, nesterov=True)
    images = torch.randn(8, 1, 6, 6)
    labels = torch.randint(0, 4, (8,))
    for step in range(config.TRAIN["steps"]):
        a = random_translate_(add_input_noise_(images.clone(), config.TRAIN["noise_std"], gen), gen)
        b = random_translate_(add_input_noise_(images.clone(), config.TRAIN["noise_std"], gen), gen)
        out_a, out_b = model(a), model(b)
        loss = F.cross_entropy(out_a, labels) + F.mse_loss(out_a.softmax(1), out_b.softmax(1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
