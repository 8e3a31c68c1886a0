# source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/109 ("I use a conv1D() to convert my data to the shape of the network's input, which is out of the training loop": the first loss.backward() works, the second fails)
# family: D
# expect: ok
# line: 27  (backward: 40)
# fix: (fixed version of D114_diffusion_data_projected_by_conv_outside_loop.py) project the data without a graph (under torch.no_grad() or .detach()), or move the projection into the model so it runs inside the loop
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Denoiser(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.time_mlp = nn.Linear(1, channels)
        self.net = nn.Sequential(nn.Conv1d(channels, 32, 3, padding=1), nn.SiLU(), nn.Conv1d(32, channels, 3, padding=1))

    def forward(self, x, t):
        return self.net(x + self.time_mlp(t[:, None].float())[:, :, None])


if __name__ == "__main__":
    raw = torch.randn(48, 3, 32)
    to_model_channels = nn.Conv1d(3, 8, kernel_size=1)
    train_data = to_model_channels(raw).detach()
    loader = DataLoader(TensorDataset(train_data), batch_size=16, shuffle=True)
    model = Denoiser()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    alphas_cumprod = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 100), dim=0)
    for epoch in range(2):
        for (x0,) in loader:
            t = torch.randint(0, 100, (x0.shape[0],))
            noise = torch.randn_like(x0)
            a = alphas_cumprod[t][:, None, None]
            x_t = a.sqrt() * x0 + (1 - a).sqrt() * noise
            loss = F.mse_loss(model(x_t, t), noise)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "loss", loss.item())
