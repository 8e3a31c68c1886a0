# source: diffusers textual_inversion.py training loop (after optimizer.step() every embedding row except the placeholder token's is restored from orig_embeds_params under torch.no_grad()); ports that drop the no_grad block
# family: A
# expect: error
# line: 49
# fix: restore the frozen rows inside `with torch.no_grad():` (as the diffusers script does)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM = 50, 16
PLACEHOLDER_ID = VOCAB - 1


class TinyTextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding = nn.Embedding(VOCAB, DIM)
        self.proj = nn.Linear(DIM, DIM)

    def get_input_embeddings(self):
        return self.token_embedding

    def forward(self, input_ids):
        return self.proj(self.token_embedding(input_ids)).mean(dim=1)


def main():
    text_encoder = TinyTextEncoder()
    text_encoder.proj.requires_grad_(False)
    orig_embeds_params = text_encoder.get_input_embeddings().weight.detach().clone()
    optimizer = torch.optim.AdamW(text_encoder.get_input_embeddings().parameters(), lr=5e-3)

    index_no_updates = torch.ones(VOCAB, dtype=torch.bool)
    index_no_updates[PLACEHOLDER_ID] = False
    target = torch.randn(4, DIM)

    for step in range(3):
        input_ids = torch.randint(0, VOCAB - 1, (4, 7))
        input_ids[:, 3] = PLACEHOLDER_ID
        loss = F.mse_loss(text_encoder(input_ids), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        # only the placeholder embedding may change: put the others back
        weight = text_encoder.get_input_embeddings().weight
        weight[index_no_updates] = orig_embeds_params[index_no_updates]
        print("step", step, "loss", round(loss.item(), 4))


if __name__ == "__main__":
    main()
