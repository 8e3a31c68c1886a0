import torch
import torch.nn.functional as F

import textcls


def main():
    torch.manual_seed(0)
    config = textcls.Config(vocab_size=50, dim=16, num_classes=3)
    model = textcls.TextClassifier.from_config(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        ids = torch.randint(1, 50, (4, 7))
        ids[:, 5:] = config.pad_id
        y = torch.randint(0, 3, (4,))
        loss = F.cross_entropy(model(ids), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
