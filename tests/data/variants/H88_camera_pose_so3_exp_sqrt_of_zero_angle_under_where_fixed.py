# source: camera-pose refinement with per-camera rotation corrections initialised at zero (BARF / NeRF-- style), through a Rodrigues exp map written like kornia's angle_axis_to_rotation_matrix (kornia/kornia#611, #2924, #3949: theta = sqrt(theta2) and torch.where picking a Taylor branch near zero): at the zero rotation sqrt's derivative is infinite and the where branches multiply it by zero, so the pose gradient is nan
# family: H
# expect: ok
# verify: the rotation corrections' gradient after the alignment loss: non-finite entries mean the pose update is nan
# line: 22  (backward: 47; the where branches fed by the square root: 23, 24)
# fix: (fixed version of H88_camera_pose_so3_exp_sqrt_of_zero_angle_under_where.py) keep sqrt away from zero on both arms (double where): theta = torch.sqrt(torch.where(near_zero, torch.ones_like(theta2), theta2))
import torch
import torch.nn as nn

torch.manual_seed(0)


def hat(v):
    zero = torch.zeros_like(v[..., 0])
    rows = [zero, -v[..., 2], v[..., 1], v[..., 2], zero, -v[..., 0], -v[..., 1], v[..., 0], zero]
    return torch.stack(rows, dim=-1).view(*v.shape[:-1], 3, 3)


def so3_exp(omega):
    theta2 = (omega * omega).sum(dim=-1, keepdim=True).unsqueeze(-1)
    near_zero = theta2 < 1e-8
    theta = torch.sqrt(torch.where(near_zero, torch.ones_like(theta2), theta2))
    a = torch.where(near_zero, 1 - theta2 / 6, torch.sin(theta) / theta)
    b = torch.where(near_zero, 0.5 - theta2 / 24, (1 - torch.cos(theta)) / (theta * theta))
    K = hat(omega)
    return torch.eye(3).expand_as(K) + a * K + b * (K @ K)


class PoseRefiner(nn.Module):
    def __init__(self, num_cams):
        super().__init__()
        self.rot_delta = nn.Parameter(torch.zeros(num_cams, 3))
        self.trans_delta = nn.Parameter(torch.zeros(num_cams, 3))

    def forward(self, points):
        R = so3_exp(self.rot_delta)
        return points @ R.transpose(-1, -2) + self.trans_delta[:, None, :]


if __name__ == "__main__":
    refiner = PoseRefiner(num_cams=3)
    opt = torch.optim.Adam(refiner.parameters(), lr=1e-2)
    points = torch.randn(3, 20, 3)
    observed = points + 0.05 * torch.randn(3, 20, 3)
    loss = (refiner(points) - observed).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    g = refiner.rot_delta.grad
    print("loss %.4f" % loss.item())
    print("MATCH" if torch.isfinite(g).all() else "MISMATCH: the rotation gradient is non-finite: %s" % g[0].tolist())
    opt.step()
