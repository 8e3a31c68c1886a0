import torch.nn.functional as F


class Trainer:
    """Truncated BPTT over the target side, after OpenNMT-py's Trainer._gradient_accumulation."""

    def __init__(self, model, optim, trunc_size):
        self.model = model
        self.optim = optim
        self.trunc_size = trunc_size

    def train_batch(self, src, tgt):
        total = 0.0
        tgt_len = tgt.size(1) - 1
        for j in range(0, tgt_len, self.trunc_size):
            dec_in = tgt[:, j: j + self.trunc_size]
            gold = tgt[:, j + 1: j + 1 + self.trunc_size]
            self.optim.zero_grad()
            logits = self.model(src, dec_in[:, : gold.size(1)], bptt=(j > 0))
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), gold.reshape(-1))
            loss.backward()
            self.optim.step()
            if self.model.decoder.state:
                self.model.decoder.detach_state()
            total += loss.item()
        return total
