"""Forcing a tiny model's greedy answer: through its saved generation config (`force_answer`, for
the OCR tests) or through its weights (`force_judge_answer`, for the yes/no judge).

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


def force_judge_answer(folder: Path, answer: str, logit: float = 10.0) -> None:
    """Make the tiny Qwen3-VL saved in `folder` answer the single token `answer` ('yes' or 'no')
    to every question of every image, as the judge reads it: the next token's logits, not
    `generate` (so `force_answer`'s sequence bias does not reach it).

    As in `tiny.models.build_tiny_text_lm`: every text token embeds as e_0 and every layer's
    output projections are zero, so the last position's hidden state is e_0 whatever the image
    and question (image features sit at the image's positions, and attention adds nothing); the
    final norm makes it sqrt(hidden) * e_0, so an output head that is zero but for W[answer, 0]
    gives `answer` the logit `logit` and every other token 0."""
    import torch
    from transformers import AutoTokenizer, Qwen3VLForConditionalGeneration

    token = AutoTokenizer.from_pretrained(folder).convert_tokens_to_ids(answer)
    model = Qwen3VLForConditionalGeneration.from_pretrained(folder)
    text = model.model.language_model
    with torch.no_grad():
        text.embed_tokens.weight.zero_()
        text.embed_tokens.weight[:, 0] = 1.0
        for layer in text.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        text.norm.weight.fill_(1.0)
        model.lm_head.weight.zero_()
        model.lm_head.weight[token, 0] = logit / model.lm_head.weight.shape[1] ** 0.5
    model.save_pretrained(folder)
