"""The model: scores, attention (masks, windows, soft or hard), encoder, decoders, the Transformer, configs."""
