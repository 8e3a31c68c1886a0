import torch

from onmt.models import build_model
from onmt.trainer import Trainer
from onmt.utils import build_torch_optimizer

OPT = {"encoder_type": "rnn", "decoder_type": "rnn", "src_vocab": 20, "tgt_vocab": 20, "emb": 8,
       "rnn_size": 16, "optim": "sgd", "learning_rate": 0.5, "trunc_size": 3}


def main():
    torch.manual_seed(0)
    model = build_model(OPT)
    trainer = Trainer(model, build_torch_optimizer(model, OPT), OPT["trunc_size"])
    for step in range(2):
        src = torch.randint(0, 20, (4, 7))
        tgt = torch.randint(0, 20, (4, 10))
        print(f"step {step}: loss {trainer.train_batch(src, tgt):.4f}")


if __name__ == "__main__":
    main()
