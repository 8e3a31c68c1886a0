import torch

from models import create_model
from options.train_options import TrainOptions

if __name__ == "__main__":
    opt = TrainOptions().parse()
    torch.manual_seed(0)
    model = create_model(opt)
    for epoch in range(opt.n_epochs):
        real_A, real_B = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
        model.set_input(real_A, real_B)
        model.optimize_parameters()
        print(f"epoch {epoch}: G {model.loss_G.item():.4f} D_A {model.loss_D_A.item():.4f}")
