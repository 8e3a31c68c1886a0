import torch

from src.models import EdgeModel


class EdgeConnect:
    def __init__(self, config):
        self.config = config
        self.edge_model = EdgeModel(config)

    def batches(self, n):
        for _ in range(n):
            images = torch.rand(2, 3, 8, 8)
            edges = (torch.rand(2, 1, 8, 8) > 0.7).float()
            masks = (torch.rand(2, 1, 8, 8) > 0.5).float()
            yield images, edges, masks

    def train(self):
        self.edge_model.train()
        for it, (images, edges, masks) in enumerate(self.batches(self.config.ITERS)):
            outputs, gen_loss, dis_loss = self.edge_model.process(images, edges, masks)
            self.edge_model.backward(gen_loss, dis_loss)
            print(f"iter {it}: gen {gen_loss.item():.4f} dis {dis_loss.item():.4f}")
