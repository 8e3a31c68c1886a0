# source: pack_padded_sequence helpers that sort a batch by length and invert the permutation in place (sort_idx[sort_idx] = arange) to restore the order ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location"); the same self-indexed write (indices[indices] = ...) was found in real code for the graph-lifetime issue
# family: C
# expect: ok
# line: 15, 16
# fix: (fixed version of C202_unsort_index_inverted_in_place.py) write the inverse permutation into a new tensor: unsort_idx = torch.empty_like(sort_idx); unsort_idx[sort_idx] = torch.arange(len(sort_idx))
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)


def sort_batch(lengths):
    sorted_lengths, sort_idx = lengths.sort(descending=True)
    unsort_idx = torch.empty_like(sort_idx)
    unsort_idx[sort_idx] = torch.arange(len(sort_idx))
    return sorted_lengths, sort_idx, unsort_idx


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 12, batch_first=True)

    def forward(self, tokens, lengths):
        sorted_lengths, sort_idx, unsort_idx = sort_batch(lengths)
        packed = pack_padded_sequence(self.emb(tokens[sort_idx]), sorted_lengths, batch_first=True)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return out[unsort_idx]


if __name__ == "__main__":
    enc = Encoder()
    tokens, lengths = torch.randint(1, 20, (5, 7)), torch.tensor([3, 7, 5, 2, 6])
    out = enc(tokens, lengths)
    out.sum().backward()
    print("output", tuple(out.shape))
