# source: the seq2seq translation tutorial layout (separate encoder_optimizer and decoder_optimizer, both zeroed at the start of train()), copied with a slip: encoder_optimizer.zero_grad() is written twice, so the decoder's gradients are never cleared and every step adds the previous ones
# family: H
# expect: silent
# verify: the decoder's output layer .grad after the last step is compared with that step's own gradient (recorded by a tensor hook)
# line: 38
# fix: clear the decoder's optimizer as well: decoder_optimizer.zero_grad()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EncoderRNN(nn.Module):
    def __init__(self, vocab=20, hidden=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, src):
        return self.gru(self.embedding(src))


class DecoderRNN(nn.Module):
    def __init__(self, vocab=20, hidden=16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tgt_in, hidden):
        output, hidden = self.gru(F.relu(self.embedding(tgt_in)), hidden)
        return self.out(output), hidden


def train_step(src, tgt, encoder, decoder, encoder_optimizer, decoder_optimizer):
    encoder_optimizer.zero_grad()
    encoder_optimizer.zero_grad()
    _, hidden = encoder(src)
    logits, _ = decoder(tgt[:, :-1], hidden)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item()


if __name__ == "__main__":
    encoder, decoder = EncoderRNN(), DecoderRNN()
    encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
    decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
    seen = []
    decoder.out.weight.register_hook(lambda g: seen.append(g.clone()))
    for step in range(3):
        src, tgt = torch.randint(0, 20, (4, 7)), torch.randint(0, 20, (4, 6))
        print("step", step, "loss %.4f" % train_step(src, tgt, encoder, decoder, encoder_optimizer, decoder_optimizer))
    same = torch.allclose(decoder.out.weight.grad, seen[-1])
    print("MATCH" if same else "MISMATCH: the decoder's .grad holds the sum of every step's gradient")
