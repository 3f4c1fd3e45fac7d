"""Forcing a tiny model's greedy answer through its saved generation config (for the OCR tests).

The tiny models' weights are random. A `sequence_bias` entry adds +100 to token t_i whenever the
last tokens are the assistant turn's opening followed by t_0..t_{i-1}: one entry per prefix of the
wanted answer, then one for the end-of-turn token. The real loader reads the config and the real
`generate` applies it, so the code under test runs end to end and the answer is known by hand.
"""

from __future__ import annotations

from pathlib import Path

ASSISTANT_OPENING = "<|im_start|>assistant\n"  # how tiny.QWEN_CHAT_TEMPLATE ends every prompt


def force_answer(folder: Path, answer: str) -> int:
    """Make the model saved in `folder` answer `answer` (then <|im_end|>) to any chat prompt;
    returns the answer's length in tokens."""
    from transformers import AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(folder)
    wanted = tokenizer.encode(answer, add_special_tokens=False)
    assert tokenizer.decode(wanted) == answer
    anchor = tokenizer.encode(ASSISTANT_OPENING, add_special_tokens=False)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    steps = [*wanted, end]
    bias = [[anchor + steps[: i + 1], 100.0] for i in range(len(steps))]
    GenerationConfig(sequence_bias=bias, eos_token_id=end).save_pretrained(folder)
    return len(wanted)
