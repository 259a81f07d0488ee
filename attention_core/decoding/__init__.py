"""Decoding: greedy and beam search, loop guard, couplet constraints, the Translator and its folder."""
