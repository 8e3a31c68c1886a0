# source: the corrected training loop of https://php.bkmy88.com/faq/1835025.html (the loss is computed on the logits; argmax is only used for the accuracy metric)
# family: G
# expect: ok
# line: 19
# fix: none needed - argmax does not reach the loss
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    X_train, y_train = torch.randn(64, 2), torch.randint(0, 4, (64,))
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4))
    loss_fn = nn.CrossEntropyLoss()
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        train_logits = model(X_train)
        train_preds = torch.softmax(train_logits, dim=1).argmax(dim=1)
        loss = loss_fn(train_logits, y_train)
        acc = (train_preds == y_train).float().mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        print("epoch", epoch, "loss", loss.item(), "acc", acc.item())
