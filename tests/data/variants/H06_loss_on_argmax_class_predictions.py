# source: https://php.bkmy88.com/faq/1835025.html (RuntimeError: element 0 of tensors does not require grad: the training loop feeds torch.softmax(logits, dim=1).argmax(dim=1).type(torch.float32) to the loss; argmax cuts the graph)
# family: H
# expect: error
# line: 20, 21  (backward: 24)
# fix: compute the loss on the logits: loss = nn.functional.cross_entropy(train_logits, y_train)
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    X_train, y_train = torch.randn(64, 2), torch.randint(0, 4, (64,))
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4))
    loss_fn = nn.MSELoss()
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        model.train()
        train_logits = model(X_train)
        train_preds_probs = torch.softmax(train_logits, dim=1).argmax(dim=1).type(torch.float32)
        loss = loss_fn(train_preds_probs, y_train.type(torch.float32))
        train_accu = (train_preds_probs == y_train).float().mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        print("epoch", epoch, "loss", loss.item(), "acc", train_accu.item())
