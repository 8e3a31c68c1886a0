# source: https://github.com/vinsis/ternary-quantization/issues/4 ("can't optimize a non-leaf Tensor": torch.ones(2, requires_grad=True).to(device) is not a leaf; fix: create it with device=...) and https://github.com/pytorch/pytorch/pull/30531 (the non-leaf .grad warning); here a test-time prompt is created with requires_grad and then cast to the model's dtype, and a one-step manual update that skips None gradients silently does nothing
# family: H
# expect: ok
# verify: the adapted prediction is compared with the one obtained when the prompt is a leaf of the right dtype
# line: 18
# fix: (fixed version of H28_prompt_cast_after_requires_grad_single_step_update.py) create the prompt in its final dtype and make it the leaf: torch.zeros(1, 8, dtype=torch.float64, requires_grad=True)
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", message="The .grad attribute of a Tensor that is not a leaf")
torch.manual_seed(0)


def adapt_and_predict(model, x, lr=0.5):
    prompt = torch.zeros(1, 8, dtype=torch.float64, requires_grad=True)
    probs = F.softmax(model(torch.cat([x, prompt.expand(x.shape[0], -1)], dim=1)), dim=1)
    entropy = -(probs * probs.clamp_min(1e-8).log()).sum(1).mean()
    entropy.backward()
    with torch.no_grad():
        if prompt.grad is not None:
            prompt -= lr * prompt.grad
    return model(torch.cat([x, prompt.expand(x.shape[0], -1)], dim=1)).argmax(1), prompt.detach()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 3)).double()
    model.requires_grad_(False)
    x = torch.randn(5, 4, dtype=torch.float64)
    _, prompt = adapt_and_predict(model, x)
    ref_prompt = torch.zeros(1, 8, dtype=torch.float64, requires_grad=True)
    probs = F.softmax(model(torch.cat([x, ref_prompt.expand(5, -1)], dim=1)), dim=1)
    (g,) = torch.autograd.grad(-(probs * probs.clamp_min(1e-8).log()).sum(1).mean(), ref_prompt)
    expected = (ref_prompt - 0.5 * g).detach()
    print("MATCH" if torch.allclose(prompt, expected, atol=1e-9) else "MISMATCH: the prompt was never updated (its .grad was None)")
