import torch
import torch.nn as nn

import moco.builder
import moco.encoders
import moco.loader


def main(arch="mlp", epochs=3):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = moco.builder.MoCo(moco.encoders.ENCODERS[arch], dim=8, K=16)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, weight_decay=1e-4)
    augment = moco.loader.TwoCropsTransform()
    data = torch.randn(8, 12)
    for epoch in range(epochs):
        im_q, im_k = augment(data, gen)
        output, target = model(im_q, im_k)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
