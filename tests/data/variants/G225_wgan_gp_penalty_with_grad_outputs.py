# source: https://github.com/caogang/wgan-gp (gradient_penalty: autograd.grad(outputs=disc_interpolates, inputs=interpolates, grad_outputs=torch.ones(disc_interpolates.size()), create_graph=True, retain_graph=True, only_inputs=True)); see https://github.com/caogang/wgan-gp/issues/28
# family: G
# expect: ok
# line: 16
# fix: none needed - grad_outputs contracts the per-sample critic scores, so autograd.grad of a non-scalar output is well defined
import torch
import torch.nn as nn

torch.manual_seed(0)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = critic(interp)
    grads = torch.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=torch.ones_like(d_interp),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


if __name__ == "__main__":
    critic = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    gen = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 8))
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for it in range(3):
        real = torch.randn(16, 8)
        fake = gen(torch.randn(16, 4))
        d_loss = critic(fake.detach()).mean() - critic(real).mean() + 10 * gradient_penalty(critic, real, fake.detach())
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = -critic(gen(torch.randn(16, 4))).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        print("iter", it, "d %.4f g %.4f" % (d_loss.item(), g_loss.item()))
