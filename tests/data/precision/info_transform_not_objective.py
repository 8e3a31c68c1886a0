# from: diffusers 0.42.1, schedulers/scheduling_ddpm.py:123 (rescale_zero_terminal_snr); the same
#       shape of note on torchvision's and kornia's image transforms and timm's Muon update
# pattern: a function analysed on its own returns a transformed tensor (a noise schedule, an image):
#          "backward through the result raises if its inputs require grad" was noise there (nothing
#          differentiates a schedule); information notes of that kind are kept for objectives only
# expect: none
# torch: ok
import torch


def rescale_zero_terminal_snr(betas):
    alphas = 1.0 - betas
    alphas_cumprod = torch.cumprod(alphas, dim=0)
    alphas_bar_sqrt = alphas_cumprod.sqrt()
    first = alphas_bar_sqrt[0].clone()
    last = alphas_bar_sqrt[-1].clone()
    alphas_bar_sqrt -= last
    alphas_bar_sqrt *= first / (first - last)
    alphas_bar = alphas_bar_sqrt ** 2
    alphas = alphas_bar[1:] / alphas_bar[:-1]
    alphas = torch.cat([alphas_bar[0:1], alphas])
    return 1 - alphas


# --- driver: run under torch, not analysed ---
betas = rescale_zero_terminal_snr(torch.linspace(1e-4, 0.02, 10))
if not (betas[-1].item() > 0.99 and betas.shape == (10,)):
    print("MISMATCH", betas)
