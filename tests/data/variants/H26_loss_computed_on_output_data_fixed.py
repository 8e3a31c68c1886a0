# source: pre-0.4 code ported to current PyTorch that unwraps Variables with .data before the loss (symptom as in https://github.com/davidmascharka/tbd-nets/issues/8: "element 0 of tensors does not require grad and does not have a grad_fn" after updating to 0.4.1)
# family: H
# expect: ok
# line: 19  (backward: 21)
# fix: (fixed version of H26_loss_computed_on_output_data.py) compute the loss on the output tensor itself: criterion(output, target)
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 1))
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(2):
        inputs, target = torch.randn(16, 10), torch.randn(16, 1)
        output = model(inputs)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())
