# source: https://github.com/lab-cosmo/torch-pme/issues/62 ("Caching destroys computational graph": the reciprocal-space kernel is cached when the cell does not change; the second calculation with a cell that requires grad reuses the cached kernel whose graph the first backward freed)
# family: D
# expect: error
# line: 30, 31  (backward: 46)
# fix: do not reuse the cached kernel when the cell requires grad (recompute it, or cache it only for cells without grad)
import math

import torch

torch.manual_seed(0)


class EwaldPotential:
    def __init__(self, smearing=1.0, kmax=2):
        self.smearing = smearing
        r = torch.arange(-kmax, kmax + 1, dtype=torch.float64)
        grid = torch.stack(torch.meshgrid(r, r, r, indexing="ij"), dim=-1).reshape(-1, 3)
        self.nvec = grid[(grid != 0).any(dim=1)]
        self._cell = None
        self._kernel = None
        self._kvectors = None

    def _compute_kernel(self, cell):
        kvectors = 2 * math.pi * self.nvec @ torch.linalg.inv(cell).T
        k2 = (kvectors ** 2).sum(dim=1)
        volume = torch.abs(torch.linalg.det(cell))
        return kvectors, 4 * math.pi / volume * torch.exp(-0.5 * self.smearing ** 2 * k2) / k2

    def __call__(self, positions, charges, cell):
        if self._cell is None or not torch.equal(cell, self._cell):
            self._kvectors, self._kernel = self._compute_kernel(cell)
            self._cell = cell
        phase = positions @ self._kvectors.T
        s_cos = (charges[:, None] * torch.cos(phase)).sum(dim=0)
        s_sin = (charges[:, None] * torch.sin(phase)).sum(dim=0)
        return 0.5 * (self._kernel * (s_cos ** 2 + s_sin ** 2)).sum()


if __name__ == "__main__":
    calculator = EwaldPotential()
    charges = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    for frame in range(2):
        positions = (5 * torch.rand(4, 3, dtype=torch.float64)).requires_grad_(True)
        cell = (5 * torch.eye(3, dtype=torch.float64)).requires_grad_(True)
        energy = calculator(positions, charges, cell)
        energy.backward()
        print("frame", frame, "energy", energy.item(), "stress", cell.grad.diagonal().tolist())
