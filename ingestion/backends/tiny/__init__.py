"""Tiny models built in code (random weights, tokenizers trained in code), saved and read back by
the real loaders: the CPU stand-ins for checkpoints that cannot be downloaded here. Test and bench
scaffolding only; nothing in the product imports it except the `tiny` model setting."""
