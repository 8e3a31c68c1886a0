# source: VAE-GAN implementations (e.g. lucabergamini/VAEGAN-PYTORCH, "broken since PyTorch 1.5" issues) that compute the encoder, decoder and discriminator losses from one forward pass and then backward/step them one after another with retain_graph=True
# family: E
# expect: error
# line: 74, 78  (backward: 77)
# fix: compute all three gradients first (torch.autograd.grad on each loss w.r.t. its own parameters, retain_graph=True) and call the three optimizer steps only afterwards
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, d_in=20, d_z=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 32), nn.LeakyReLU(0.2))
        self.mu = nn.Linear(32, d_z)
        self.logvar = nn.Linear(32, d_z)

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), self.logvar(h)


class VAEGAN(nn.Module):
    def __init__(self, d_in=20, d_z=4):
        super().__init__()
        self.encoder = Encoder(d_in, d_z)
        self.decoder = nn.Sequential(nn.Linear(d_z, 32), nn.ReLU(), nn.Linear(32, d_in), nn.Tanh())
        self.disc_features = nn.Sequential(nn.Linear(d_in, 32), nn.LeakyReLU(0.2))
        self.disc_head = nn.Linear(32, 1)

    def discriminate(self, x):
        feat = self.disc_features(x)
        return feat, self.disc_head(feat)

    def forward(self, x):
        mu, logvar = self.encoder(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        x_rec = self.decoder(z)
        x_prior = self.decoder(torch.randn_like(z))
        return mu, logvar, x_rec, x_prior


def losses(model, x):
    mu, logvar, x_rec, x_prior = model(x)
    feat_real, logit_real = model.discriminate(x)
    feat_rec, logit_rec = model.discriminate(x_rec)
    _, logit_prior = model.discriminate(x_prior)
    kld = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    feat_mse = F.mse_loss(feat_rec, feat_real)
    ones, zeros = torch.ones_like(logit_real), torch.zeros_like(logit_real)
    gan = (F.binary_cross_entropy_with_logits(logit_real, ones)
           + F.binary_cross_entropy_with_logits(logit_rec, zeros)
           + F.binary_cross_entropy_with_logits(logit_prior, zeros))
    loss_enc = kld + feat_mse
    loss_dec = 0.5 * feat_mse - gan
    loss_dis = gan
    return loss_enc, loss_dec, loss_dis


if __name__ == "__main__":
    model = VAEGAN()
    opt_enc = torch.optim.RMSprop(model.encoder.parameters(), lr=1e-3)
    opt_dec = torch.optim.RMSprop(model.decoder.parameters(), lr=1e-3)
    disc_params = list(model.disc_features.parameters()) + list(model.disc_head.parameters())
    opt_dis = torch.optim.RMSprop(disc_params, lr=1e-3)
    x = torch.rand(16, 20) * 2 - 1

    loss_enc, loss_dec, loss_dis = losses(model, x)

    model.zero_grad()
    loss_enc.backward(retain_graph=True)
    opt_enc.step()

    model.zero_grad()
    loss_dec.backward(retain_graph=True)
    opt_dec.step()

    model.zero_grad()
    loss_dis.backward()
    opt_dis.step()
    print("enc %.4f dec %.4f dis %.4f" % (loss_enc.item(), loss_dec.item(), loss_dis.item()))
