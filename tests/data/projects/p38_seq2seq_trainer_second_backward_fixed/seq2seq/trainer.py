import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, encoder, decoder, length_head, lr=0.01):
        self.encoder, self.decoder, self.length_head = encoder, decoder, length_head
        params = [*encoder.parameters(), *decoder.parameters(), *length_head.parameters()]
        self.optimizer = torch.optim.Adam(params, lr=lr)

    def encode(self, src):
        self.enc_outputs, self.enc_hidden = self.encoder(src)

    def translation_loss(self, tgt_in, tgt_out):
        logits, _ = self.decoder(tgt_in, self.enc_hidden, self.enc_outputs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))

    def length_loss(self, lengths):
        return F.cross_entropy(self.length_head(self.enc_hidden), lengths)

    def train_batch(self, src, tgt_in, tgt_out, lengths):
        self.optimizer.zero_grad()
        self.encode(src)
        loss_tr = self.translation_loss(tgt_in, tgt_out)
        loss_tr.backward(retain_graph=True)
        loss_len = self.length_loss(lengths)
        loss_len.backward()
        self.optimizer.step()
        return loss_tr.item(), loss_len.item()
