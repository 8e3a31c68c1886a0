# exported from train.ipynb (jupyter nbconvert --to script): cells run top to bottom, no main block
import torch

from models.net import Net
from utils.training import fit

# %%
torch.manual_seed(0)
model = Net(6, 3)
batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)]

# %%
fit(model, batches)
