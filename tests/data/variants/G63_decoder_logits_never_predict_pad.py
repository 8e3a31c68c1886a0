# source: seq2seq decoders that forbid the <pad> / <unk> tokens by writing -inf into those logit columns in place before the loss and the greedy argmax
# family: G
# expect: ok
# line: 25, 26  (backward: 35)
# fix: none needed - the logits are the output of the output projection (a Linear saves its input and weight, not its output), so the in-place column writes happen before any op that saves them
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PAD, UNK = 0, 1


class Decoder(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=PAD)
        self.rnn = nn.LSTM(d, d, batch_first=True)
        self.proj = nn.Linear(d, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.emb(tokens))
        logits = self.proj(h)
        logits[..., PAD] = float("-inf")
        logits[..., UNK] = float("-inf")
        return logits


if __name__ == "__main__":
    dec = Decoder()
    tokens = torch.randint(2, 20, (3, 6))
    logits = dec(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    loss.backward()
    print("loss", loss.item(), "greedy", logits.argmax(-1)[0].tolist())
