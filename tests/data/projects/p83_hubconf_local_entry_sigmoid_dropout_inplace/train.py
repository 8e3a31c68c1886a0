import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    model = torch.hub.load(".", "gated_mlp", source="local", dim=16, n_classes=4)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


if __name__ == "__main__":
    main()
