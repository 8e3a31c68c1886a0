# from: kornia 0.9.0, kornia/feature/scale_space_detector.py:58 and
#       kornia/models/sam/architecture/prompt_encoder.py:238; monai 1.6.1,
#       monai/networks/nets/vista3d.py:910; diffusers' tiled VAE blends (`b * (y / blend)`)
# pattern: dividing or multiplying by a Python number (`float(n)`, an argument annotated
#          `tuple[int, int]`, a loop index over `range`) saves nothing, so writing the tensor
#          afterwards is fine
# expect: none
# torch: ok
import torch


def scale_coordinates(coords, sigmas, num_levels):
    base = sigmas[:, 0].view(-1, 1, 1)
    coords[:, :, 0:1] = base * torch.pow(2.0, coords[:, :, 0:1] / float(num_levels))
    return coords


def normalise(coords_input: torch.Tensor, image_size: tuple[int, int]) -> torch.Tensor:
    coords = coords_input.clone()
    coords[:, :, 0] = coords[:, :, 0] / image_size[1]
    coords[:, :, 1] = coords[:, :, 1] / image_size[0]
    return coords


def blend_rows(a, b, blend_extent: int):
    blend_extent = min(a.shape[2], b.shape[2], blend_extent)
    for y in range(blend_extent):
        b[:, :, y] = a[:, :, -blend_extent + y] * (1 - y / blend_extent) + b[:, :, y] * (y / blend_extent)
    return b


# --- driver: run under torch, not analysed ---
c = torch.randn(2, 5, 3, requires_grad=True)
s = torch.rand(2, 4, requires_grad=True)
scale_coordinates(c.clone(), s, 3).sum().backward()
normalise(c, (32, 64)).sum().backward()
a = torch.randn(1, 2, 6, requires_grad=True)
b = torch.randn(1, 2, 6, requires_grad=True)
blend_rows(a, b.clone(), 4).sum().backward()
