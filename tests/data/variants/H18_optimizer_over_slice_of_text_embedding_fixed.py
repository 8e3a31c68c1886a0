# source: https://github.com/aliasgharkhani/SLiMe/issues/10 ("Optimize Text embedding error: can't optimize a non-leaf Tensor ... caused by: 'embeddings_to_optimize' is a slice of the original 'text_embedding'")
# family: H
# expect: ok
# (the hazard version raises ValueError)
# line: 18  (backward: 19)
# fix: (fixed version of H18_optimizer_over_slice_of_text_embedding.py) optimize a new leaf copied from the slice: embeddings_to_optimize = text_embedding[:, 1:3].detach().clone().requires_grad_(True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    token_embedding = nn.Embedding(50, 16)
    prompt = torch.tensor([[1, 7, 8, 2]])
    text_embedding = token_embedding(prompt)
    embeddings_to_optimize = text_embedding[:, 1:3].detach().clone().requires_grad_(True)
    optimizer = torch.optim.Adam([embeddings_to_optimize], lr=1e-2)
    decoder = nn.Linear(16, 8)
    target = torch.randn(1, 2, 8)
    for step in range(3):
        loss = F.mse_loss(decoder(embeddings_to_optimize), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())
