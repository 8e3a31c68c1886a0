import torch.nn as nn


class NMTModel(nn.Module):
    def __init__(self, encoder, decoder, generator):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.generator = generator

    def forward(self, src, tgt, bptt=False):
        if not bptt:
            _, enc_final = self.encoder(src)
            self.decoder.init_state(enc_final)
        return self.generator(self.decoder(tgt))
