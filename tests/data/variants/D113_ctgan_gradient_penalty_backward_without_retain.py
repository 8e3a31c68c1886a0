# source: https://github.com/sdv-dev/CTGAN/issues/37 ("Retention of gradient penalty graph": pen.backward(retain_graph=True) is needed because the critic loss backpropagated right after shares the generator graph of the undetached fake batch)
# family: D
# expect: error
# line: 46  (backward: 47)
# fix: keep the graph for the second backward: pen.backward(retain_graph=True) (detaching the fake batch is not enough here: the penalty's interpolates would then not require grad and autograd.grad raises)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.seq(x)

    def calc_gradient_penalty(self, real_data, fake_data, lambda_=10.0):
        alpha = torch.rand(real_data.size(0), 1)
        interpolates = alpha * real_data + (1 - alpha) * fake_data
        disc_interpolates = self(interpolates)
        gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                        grad_outputs=torch.ones_like(disc_interpolates),
                                        create_graph=True, retain_graph=True, only_inputs=True)[0]
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * lambda_


if __name__ == "__main__":
    data = torch.randn(64, 12)
    generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 12))
    discriminator = Discriminator()
    optimizerG = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.9))
    optimizerD = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.9))
    for step in range(2):
        for _ in range(2):
            fakez = torch.randn(16, 8)
            fake = generator(fakez)
            real = data[torch.randint(0, 64, (16,))]
            y_fake = discriminator(fake)
            y_real = discriminator(real)
            pen = discriminator.calc_gradient_penalty(real, fake)
            loss_d = -(torch.mean(y_real) - torch.mean(y_fake))
            optimizerD.zero_grad()
            pen.backward()
            loss_d.backward()
            optimizerD.step()
        y_fake = discriminator(generator(torch.randn(16, 8)))
        loss_g = -torch.mean(y_fake)
        optimizerG.zero_grad()
        loss_g.backward()
        optimizerG.step()
        print("step", step, "loss_d", loss_d.item(), "loss_g", loss_g.item())
