"""Truncated BPTT over one long stream; the hidden state is kept on the trainer between chunks."""
import torch.nn.functional as F


class StreamTrainer:
    def __init__(self, model, optimizer, chunk):
        self.model, self.optimizer, self.chunk = model, optimizer, chunk
        self.hidden = None

    def epoch(self, stream):
        total = 0.0
        for i in range(0, stream.size(1) - 1, self.chunk):
            x = stream[:, i:i + self.chunk]
            y = stream[:, i + 1:i + 1 + self.chunk]
            x = x[:, :y.size(1)]
            if i == 0:
                self.hidden = None
            logits, self.hidden = self.model(x, self.hidden)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total
