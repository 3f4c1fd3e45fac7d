"""Tiny models (tiny.py) whose vocabulary holds every casing of the answer words as one token, as
Qwen's does ('yes', 'Yes', 'YES', ' yes', ' Yes', ...): built with the real classes and saved, so
the judges load them with their real loaders. Used by the P(yes) spelling tests of both judges."""

from __future__ import annotations

from pathlib import Path

# Added to tiny.py's vocabulary, which already has 'yes' and 'no' as single tokens.
EXTRA_SPELLINGS = ("Yes", "YES", " yes", " Yes", " YES", "No", "NO", " no", " No", " NO")


def add_answer_spellings(folder: Path, model_class: str) -> Path:
    """Add EXTRA_SPELLINGS to the tokenizer and the model saved in `folder` (in place).

    `model_class` names the transformers auto class that loads it. New input embeddings copy
    token 0's (tiny.build_tiny_text_lm embeds every token alike) and new output-head rows are 0,
    so the model's logits for other tokens do not change."""
    import torch
    import transformers
    from transformers import AutoTokenizer

    folder = Path(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = getattr(transformers, model_class).from_pretrained(folder)
    old = model.get_input_embeddings().weight.shape[0]
    tokenizer.add_tokens(list(EXTRA_SPELLINGS))
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    with torch.no_grad():
        embeddings = model.get_input_embeddings().weight
        embeddings[old:] = embeddings[0]
        model.get_output_embeddings().weight[old:] = 0.0
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
