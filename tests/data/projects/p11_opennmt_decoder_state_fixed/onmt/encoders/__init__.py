from onmt.encoders.encoder import RNNEncoder

str2enc = {"rnn": RNNEncoder}
