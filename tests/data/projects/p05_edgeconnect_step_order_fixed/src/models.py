"""After knazeri/edge-connect src/models.py (EdgeModel.process / EdgeModel.backward)."""
import torch
import torch.nn as nn

from src.loss import AdversarialLoss
from src.networks import Discriminator, EdgeGenerator


class EdgeModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.generator = EdgeGenerator()
        self.discriminator = Discriminator(in_channels=2)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss()
        optim_cls = getattr(torch.optim, config.OPTIMIZER)
        self.gen_optimizer = optim_cls(self.generator.parameters(), lr=config.LR, betas=(config.BETA1, config.BETA2))
        self.dis_optimizer = optim_cls(self.discriminator.parameters(), lr=config.LR * config.D2G_LR,
                                       betas=(config.BETA1, config.BETA2))

    def forward(self, images, edges, masks):
        edges_masked = edges * (1 - masks)
        images_masked = images * (1 - masks) + masks
        inputs = torch.cat((images_masked[:, :1], edges_masked, masks), dim=1)
        return self.generator(inputs)

    def process(self, images, edges, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        outputs = self(images, edges, masks)
        gray = images[:, :1]
        dis_real, _ = self.discriminator(torch.cat((gray, edges), dim=1))
        dis_fake, _ = self.discriminator(torch.cat((gray, outputs.detach()), dim=1))
        dis_loss = (self.adversarial_loss(dis_real, True) + self.adversarial_loss(dis_fake, False)) / 2
        gen_fake, _ = self.discriminator(torch.cat((gray, outputs), dim=1))
        gen_loss = self.config.ADV_LOSS_WEIGHT * self.adversarial_loss(gen_fake, True)
        gen_loss = gen_loss + self.config.L1_LOSS_WEIGHT * self.l1_loss(outputs, edges)
        return outputs, gen_loss, dis_loss

    def backward(self, gen_loss, dis_loss):
        gen_loss.backward()
        self.gen_optimizer.step()
        dis_loss.backward()
        self.dis_optimizer.step()
