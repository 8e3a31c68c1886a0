import torch

from seq2seq.decoder import AttnDecoderRNN, LengthPredictor
from seq2seq.encoder import EncoderRNN
from seq2seq.trainer import Trainer

VOCAB, HIDDEN, MAX_LEN = 11, 8, 6


def main():
    torch.manual_seed(0)
    trainer = Trainer(EncoderRNN(VOCAB, HIDDEN), AttnDecoderRNN(VOCAB, HIDDEN), LengthPredictor(HIDDEN, MAX_LEN))
    for it in range(2):
        src = torch.randint(0, VOCAB, (3, 5))
        tgt = torch.randint(0, VOCAB, (3, 5))
        lengths = torch.randint(0, MAX_LEN, (3,))
        print("iter", it, trainer.train_batch(src, tgt[:, :-1], tgt[:, 1:], lengths))


if __name__ == "__main__":
    main()
