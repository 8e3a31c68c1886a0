# source: WGAN-GP (Gulrajani et al.) gradient penalty: torch.autograd.grad(..., create_graph=True, retain_graph=True) and a single backward of the total critic loss
# family: G
# expect: ok
# line: 17  (backward: 29)
# fix: none needed - autograd.grad keeps the graph (create_graph/retain_graph=True), the penalty is added to the critic loss and backward runs once before optimizer.step()
import torch
import torch.nn as nn

torch.manual_seed(0)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = critic(interpolates)
    grads = torch.autograd.grad(outputs=d_interp, inputs=interpolates, grad_outputs=torch.ones_like(d_interp),
                                create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


if __name__ == "__main__":
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    D = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    optD = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.0, 0.9))
    for _ in range(2):
        real, fake = torch.randn(8, 8), G(torch.randn(8, 4)).detach()
        d_loss = D(fake).mean() - D(real).mean() + 10.0 * gradient_penalty(D, real, fake)
        optD.zero_grad()
        d_loss.backward()
        optD.step()
    print("d_loss", d_loss.item())
