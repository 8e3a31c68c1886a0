import torch
import torch.nn.functional as F

from textinv import TinyTextEncoder, add_placeholder_token, frozen_rows_mask, restore_frozen_rows


def main(steps=3):
    torch.manual_seed(0)
    encoder = TinyTextEncoder(vocab=32, dim=16)
    placeholder = add_placeholder_token(encoder, init_token_id=3)
    encoder.requires_grad_(False)
    embeddings = encoder.get_input_embeddings()
    embeddings.weight.requires_grad_(True)
    optimizer = torch.optim.AdamW([embeddings.weight], lr=1e-2)
    orig = embeddings.weight.detach().clone()
    mask = frozen_rows_mask(orig.shape[0], placeholder)
    target = torch.randn(4, 16)
    ids = torch.tensor([[1, placeholder, 5], [placeholder, 2, 7], [4, 4, placeholder], [placeholder, 9, 9]])
    for _ in range(steps):
        loss = F.mse_loss(encoder(ids), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        restore_frozen_rows(encoder, orig, mask)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
