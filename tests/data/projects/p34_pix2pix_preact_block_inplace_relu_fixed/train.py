import torch

from models import create_model
from options.train_options import TrainOptions

if __name__ == "__main__":
    opt = TrainOptions().parse()
    torch.manual_seed(0)
    model = create_model(opt)
    for it in range(opt.n_iters):
        data = (torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))
        model.set_input(data)
        model.optimize_parameters()
    print("done")
