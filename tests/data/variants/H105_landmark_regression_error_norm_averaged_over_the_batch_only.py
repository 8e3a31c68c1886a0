# source: facial-landmark regression with a Euclidean point error (forum threads ending in "grad can be implicitly created only for scalar outputs"): the per-point distance torch.linalg.vector_norm(pred - target, dim=-1) is averaged over the batch dimension only, leaving one value per landmark, and the backward is called on that vector
# family: H
# expect: error
# line: 29  (backward: 31)
# fix: average over the landmarks as well: .mean()
import torch
import torch.nn as nn

torch.manual_seed(0)

N_LANDMARKS = 5


class LandmarkRegressor(nn.Module):
    def __init__(self, n_in=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 64), nn.ReLU())
        self.points = nn.Linear(64, N_LANDMARKS * 2)

    def forward(self, x):
        return self.points(self.body(x)).view(x.shape[0], N_LANDMARKS, 2)


if __name__ == "__main__":
    model = LandmarkRegressor()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, target = torch.randn(8, 32), torch.rand(8, N_LANDMARKS, 2)
    pred = model(x)
    point_error = torch.linalg.vector_norm(pred - target, dim=-1).mean(dim=0)
    opt.zero_grad()
    point_error.backward()
    opt.step()
    print("error %.4f" % point_error.mean().item())
