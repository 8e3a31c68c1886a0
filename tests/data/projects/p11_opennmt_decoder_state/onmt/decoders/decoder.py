"""After OpenNMT-py onmt/decoders/decoder.py: the decoder keeps its recurrent state on self."""
import torch.nn as nn


class RNNDecoder(nn.Module):
    def __init__(self, vocab, emb_dim, hidden):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, emb_dim)
        self.rnn = nn.LSTM(emb_dim, hidden, batch_first=True)
        self.state = {}

    def init_state(self, encoder_final):
        self.state["hidden"] = encoder_final

    def detach_state(self):
        self.state["hidden"] = tuple(h.detach() for h in self.state["hidden"])

    def forward(self, tgt):
        dec_out, dec_state = self.rnn(self.embeddings(tgt), self.state["hidden"])
        self.state["hidden"] = dec_state
        return dec_out
