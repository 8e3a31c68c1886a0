import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(nn.Module):
    """LightningModule-style: forward, training_step, configure_optimizers."""

    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
        self.embed = nn.EmbeddingBag(hparams.vocab, hparams.hidden, mode="mean")
        self.head = nn.Sequential(
            nn.Linear(hparams.hidden, hparams.hidden),
            nn.Tanh(),
            nn.Dropout(p=0.2, inplace=True),
            nn.Linear(hparams.hidden, hparams.classes),
        )
        self.trainer = None

    def forward(self, tokens):
        return self.head(self.embed(tokens))

    def training_step(self, batch, batch_idx):
        tokens, labels = batch
        logits = self(tokens)
        loss = F.cross_entropy(logits, labels)
        self.log("train_loss", loss)
        return loss

    def log(self, name, value):
        self.trainer.logged[name] = value.item()

    def on_train_epoch_end(self):
        print("epoch loss", self.trainer.logged.get("train_loss"))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
