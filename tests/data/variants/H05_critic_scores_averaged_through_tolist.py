# source: generator-training loops that average a learned critic's per-sample scores through Python lists (scores.tolist(), then torch.tensor(...)) before backward - one of the causes listed for "element 0 of tensors does not require grad and does not have a grad_fn" (https://jishuzhan.net/article/1722447953278275585, https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html)
# family: H
# expect: error
# line: 20, 21  (backward: 23)
# fix: reduce the scores as tensors: loss = -scores.clamp(max=clip).mean()
import torch
import torch.nn as nn

torch.manual_seed(0)


if __name__ == "__main__":
    generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
    critic = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    critic.requires_grad_(False)
    opt = torch.optim.Adam(generator.parameters(), lr=1e-3)
    clip = 5.0
    for step in range(2):
        scores = critic(generator(torch.randn(16, 8))).squeeze(-1)
        clipped = [min(s, clip) for s in scores.tolist()]
        loss = -torch.tensor(clipped).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item())
