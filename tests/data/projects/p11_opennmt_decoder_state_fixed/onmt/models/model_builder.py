import torch.nn as nn

from onmt.decoders import str2dec
from onmt.encoders import str2enc
from onmt.models.model import NMTModel


def build_model(opt):
    encoder = str2enc[opt["encoder_type"]](opt["src_vocab"], opt["emb"], opt["rnn_size"])
    decoder = str2dec[opt["decoder_type"]](opt["tgt_vocab"], opt["emb"], opt["rnn_size"])
    generator = nn.Linear(opt["rnn_size"], opt["tgt_vocab"])
    return NMTModel(encoder, decoder, generator)
