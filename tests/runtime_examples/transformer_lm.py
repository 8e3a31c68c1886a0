"""pytorch/examples word_language_model (Transformer) in small: positional encoding with
dropout, a causal mask, gradient clipping, manual SGD on p.data as the example does."""
import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[: x.size(0), :])


class TransformerModel(nn.Module):
    def __init__(self, ntoken=30, ninp=16, nhead=2, nhid=32, nlayers=2, dropout=0.2):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.embed = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        self.ninp = ninp

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.pos_encoder(self.embed(src) * math.sqrt(self.ninp))
        return torch.log_softmax(self.decoder(self.encoder(src, mask)), dim=-1)


torch.manual_seed(0)
model = TransformerModel()
criterion = nn.NLLLoss()
data = torch.randint(0, 30, (12, 4))
lr = 5.0
for step in range(4):
    model.zero_grad()
    output = model(data[:-1])
    loss = criterion(output.view(-1, 30), data[1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    print("step %d loss %.5f" % (step, loss.item()))
