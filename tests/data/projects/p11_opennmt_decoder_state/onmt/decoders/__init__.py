from onmt.decoders.decoder import RNNDecoder

str2dec = {"rnn": RNNDecoder}
