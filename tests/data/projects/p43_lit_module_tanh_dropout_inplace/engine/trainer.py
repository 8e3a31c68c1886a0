"""A hand-written stand-in for pytorch_lightning.Trainer: the module owns its steps and optimizers."""


class Trainer:
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs
        self.logged = {}

    def fit(self, module, train_loader):
        module.trainer = self
        optimizer = module.configure_optimizers()
        module.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(train_loader):
                loss = module.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            module.on_train_epoch_end()
