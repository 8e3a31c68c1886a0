# source: https://github.com/OpenNMT/OpenNMT-py/issues/1148 and https://github.com/flairNLP/flair/issues/1062 (truncated BPTT: the recurrent state carried into the next chunk must be detached); here a streaming keyword spotter keeps one GRU state per speaker in a dict
# family: D
# expect: ok
# line: 23  (backward: 35)
# fix: (fixed version of D116_streaming_gru_state_per_speaker_dict.py) store the carried state without its graph: self.states[speaker] = h.detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StreamingKWS(nn.Module):
    def __init__(self, n_mels=10, hidden=24, n_keywords=4):
        super().__init__()
        self.gru = nn.GRU(n_mels, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_keywords)
        self.states = {}

    def forward(self, chunk, speaker):
        h0 = self.states.get(speaker)
        out, h = self.gru(chunk, h0)
        self.states[speaker] = h.detach()
        return self.head(out[:, -1])


if __name__ == "__main__":
    model = StreamingKWS()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stream = [("spk_a", 0), ("spk_b", 1), ("spk_a", 2), ("spk_b", 3)]
    for speaker, label in stream:
        chunk = torch.randn(1, 20, 10)
        loss = F.cross_entropy(model(chunk, speaker), torch.tensor([label]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(speaker, "loss", loss.item())
