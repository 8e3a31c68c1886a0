import torch
import torch.nn.functional as F


def fit(model, batches, epochs=2, lr=0.1):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for x, y in batches:
            probs = torch.softmax(model(x), dim=-1)
            probs.clamp_(min=1e-6)
            loss = F.nll_loss(probs.log(), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "loss", loss.item())
