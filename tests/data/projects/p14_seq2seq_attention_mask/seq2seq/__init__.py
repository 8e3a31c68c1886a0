from .models import AttnDecoder, Encoder, Seq2Seq

__all__ = ["AttnDecoder", "Encoder", "Seq2Seq"]
