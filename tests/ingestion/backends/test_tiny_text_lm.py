"""The premise of the vLLM test, checked through transformers: the tiny text LM's next-token logits
are exactly the values written into its head, for any prompt, at every position."""

from __future__ import annotations

import pytest
import torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

from ingestion.backends.tiny.models import build_tiny_text_lm, set_text_lm_logits


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return build_tiny_text_lm(tmp_path_factory.mktemp("tiny") / "text_lm", {"yes": 3.0, "no": 1.0})


def _logits(model, tokenizer, text):
    ids = torch.tensor([tokenizer.encode(text).ids])
    with torch.inference_mode():
        return model(input_ids=ids).logits[0]


def test_saved_head_sets_the_logits_for_any_prompt(saved):
    tokenizer = Tokenizer.from_file(str(saved / "tokenizer.json"))
    model = AutoModelForCausalLM.from_pretrained(saved, dtype=torch.float32).eval()
    yes, no = tokenizer.token_to_id("yes"), tokenizer.token_to_id("no")
    expected = torch.zeros(model.config.vocab_size)
    expected[yes], expected[no] = 3.0, 1.0
    for text in ("<|im_start|>user\nImage a.png.\nIs there a cat?", "hello 你好 json"):
        logits = _logits(model, tokenizer, text)
        for row in logits:  # every position
            torch.testing.assert_close(row, expected, atol=1e-4, rtol=0)

    set_text_lm_logits(model, {no: 0.5, yes: -1.0})
    expected[yes], expected[no] = -1.0, 0.5
    torch.testing.assert_close(
        _logits(model, tokenizer, "is the sign red")[-1], expected, atol=1e-4, rtol=0
    )
