import torch.nn as nn


class RNNEncoder(nn.Module):
    def __init__(self, vocab, emb_dim, hidden):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, emb_dim)
        self.rnn = nn.LSTM(emb_dim, hidden, batch_first=True)

    def forward(self, src):
        memory_bank, final = self.rnn(self.embeddings(src))
        return memory_bank, final
