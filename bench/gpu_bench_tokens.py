"""Tokenizers for the architecture bench, built in code (no hub, no vocabulary files).

Timing needs token counts, not merges. Each tokenizer here is a word-level `tokenizers` model that
splits text into words, single punctuation marks and newlines, and puts the family's special
tokens at their real ids inside the text encoder's real vocabulary (embedding rows). For common
English words the real byte-level BPE tokenizers (Qwen, Mistral's Tekken, Llama 3, GLM) also spend
one token per word and one per punctuation mark, so prompts and templates come out at about the
real length: Qwen-Image's system template counts 34 tokens here, the 34 its pipeline drops
(`prompt_template_encode_start_idx`). Rare words, digits and non-English text cost more tokens in
the real ones (T5's SentencePiece, about 1.3 a word); most pipelines pad to a fixed length anyway
(FLUX: CLIP 77 and T5 512; FLUX.2: 512; HiDream: 128), so only Z-Image, Qwen-Image, ERNIE-Image
and GLM-Image's prefill see the prompt's own length.

A word of `BENCH_PROMPT` has an id of its own; any other word (a pipeline's system template) is
the unknown token, still one token. In a tiny dry run the vocabulary has a few hundred rows, so the
special tokens move to its top (`special_ids`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Qwen's chat template as the project's tiny models use it (that module imports only the standard
# library; the dry run's test checks that no warehouse package comes in with it)
from ingestion.backends.tiny.models import QWEN_CHAT_TEMPLATE

# The prompt every row draws: a typical benchmark prompt (about 45 words), with quoted text, which
# GLM-Image's glyph encoder reads.
BENCH_PROMPT = (
    "A photo of a red fox sitting beside a wooden sign that reads 'OPEN', on a snowy hill at "
    "sunset, soft golden light, shallow depth of field, highly detailed fur, two pine trees in the "
    "background and a small blue bird perched on top of the sign"
)
WORD_PATTERN = r"\w+|[^\w\s]|\n"

# Mistral-Small-3's layout: [SYSTEM_PROMPT]...[/SYSTEM_PROMPT][INST]...[/INST]
MISTRAL_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['content'] is string %}{% set text = message['content'] %}"
    "{% else %}{% set text = message['content'] | selectattr('type', 'equalto', 'text')"
    " | map(attribute='text') | join('') %}{% endif %}"
    "{% if message['role'] == 'system' %}[SYSTEM_PROMPT]{{ text }}[/SYSTEM_PROMPT]"
    "{% elif message['role'] == 'user' %}[INST]{{ text }}[/INST]"
    "{% else %}{{ text }}{{ eos_token }}{% endif %}{% endfor %}"
)


@dataclass(frozen=True)
class Family:
    """A tokenizer family: its special tokens with their real ids, and which of them the
    tokenizer adds around a text or pads with."""

    specials: dict[str, int]
    pad: str
    unk: str
    bos: str | None = None
    eos: str | None = None
    add_bos: bool = False
    add_eos: bool = False
    chat_template: str | None = None
    model_max_length: int = 131072
    extra: dict[str, str] = field(default_factory=dict)  # named special tokens (GLM's grid marks)


FAMILIES = {
    # Qwen2.5 and Qwen3 (tokenizer_config.json added_tokens_decoder); no unknown token in the real
    # byte-level BPE, so one is added
    "qwen": Family(
        specials={
            "<|endoftext|>": 151643,
            "<|im_start|>": 151644,
            "<|im_end|>": 151645,
            "<|vision_start|>": 151652,
            "<|vision_end|>": 151653,
            "<|image_pad|>": 151655,
            "<|video_pad|>": 151656,
            "<unk>": 151660,
        },
        pad="<|endoftext|>",
        unk="<unk>",
        eos="<|im_end|>",
        chat_template=QWEN_CHAT_TEMPLATE,
    ),
    # Mistral's Tekken (Mistral-Small-3.x, Ministral 3): control tokens 0-18
    "mistral": Family(
        specials={
            "<unk>": 0,
            "<s>": 1,
            "</s>": 2,
            "[INST]": 3,
            "[/INST]": 4,
            "[IMG]": 10,
            "<pad>": 11,
            "[SYSTEM_PROMPT]": 17,
            "[/SYSTEM_PROMPT]": 18,
        },
        pad="<pad>",
        unk="<unk>",
        bos="<s>",
        eos="</s>",
        add_bos=True,
        chat_template=MISTRAL_CHAT_TEMPLATE,
    ),
    # CLIP's BPE: start and end of text around every prompt; model_max_length is the encoder's
    # position count (set where the tokenizer is built)
    "clip": Family(
        specials={"<|startoftext|>": 49406, "<|endoftext|>": 49407},
        pad="<|endoftext|>",
        unk="<|endoftext|>",
        bos="<|startoftext|>",
        eos="<|endoftext|>",
        add_bos=True,
        add_eos=True,
        model_max_length=77,
    ),
    # T5's SentencePiece: </s> after every text
    "t5": Family(
        specials={"<pad>": 0, "</s>": 1, "<unk>": 2},
        pad="<pad>",
        unk="<unk>",
        eos="</s>",
        add_eos=True,
        model_max_length=512,
    ),
    # Llama 3.1: <|begin_of_text|> before every text
    "llama3": Family(
        specials={"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001, "<unk>": 128002},
        pad="<|end_of_text|>",
        unk="<unk>",
        bos="<|begin_of_text|>",
        eos="<|end_of_text|>",
        add_bos=True,
    ),
    # GLM-Image's autoregressive stage: pad and image token as in its config (167841, 167855);
    # the grid marks and the start token are placed beside them (their real ids were not read;
    # timing needs the count). The chat template is Qwen's, as in the project's tiny GLM-Image.
    "glm": Family(
        specials={
            "<|endoftext|>": 167841,
            "<|im_start|>": 167842,
            "<|im_end|>": 167843,
            "<sop>": 167844,
            "<grid>": 167845,
            "</grid>": 167846,
            "<|image|>": 167855,
            "<unk>": 167856,
        },
        pad="<|endoftext|>",
        unk="<unk>",
        bos="<sop>",
        eos="<|im_end|>",
        chat_template=QWEN_CHAT_TEMPLATE,
        extra={"image_token": "<|image|>", "grid_bos_token": "<grid>", "grid_eos_token": "</grid>"},
    ),
}


def special_ids(specials: dict[str, int], vocab_size: int) -> dict[str, int]:
    """The real ids when they all fit the vocabulary; else (a tiny dry run) the vocabulary's top
    rows, in the order of the real ids."""
    if max(specials.values()) < vocab_size:
        return dict(specials)
    ordered = sorted(specials, key=specials.get)
    return {token: vocab_size - len(ordered) + i for i, token in enumerate(ordered)}


def prompt_words(text: str = BENCH_PROMPT) -> list[str]:
    """The words of `text` in first-seen order, each once, and the newline."""
    words = dict.fromkeys(re.findall(WORD_PATTERN, text))
    return list(dict.fromkeys(["\n", *words]))


def word_vocab(specials: dict[str, int], vocab_size: int) -> dict[str, int]:
    """Token -> id: the specials (`special_ids`), then the prompt's words at the lowest free ids."""
    vocab = special_ids(specials, vocab_size)
    taken = set(vocab.values())
    free = (i for i in range(vocab_size) if i not in taken)
    for word in prompt_words():
        if word not in vocab:
            vocab[word] = next(free)
    return vocab


def build_tokenizer(family: str, vocab_size: int, **overrides):
    """A `PreTrainedTokenizerFast` of `family` over a text encoder with `vocab_size` embedding
    rows; `overrides` are tokenizer keyword arguments (model_max_length, padding_side)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    spec = FAMILIES[family]
    vocab = word_vocab(spec.specials, vocab_size)
    raw = Tokenizer(models.WordLevel(vocab, unk_token=spec.unk))
    raw.pre_tokenizer = pre_tokenizers.Split(Regex(WORD_PATTERN), behavior="removed", invert=True)
    raw.add_special_tokens(list(spec.specials))
    raw.post_processor = _around(spec, vocab)
    kwargs = dict(
        pad_token=spec.pad,
        unk_token=spec.unk,
        bos_token=spec.bos,
        eos_token=spec.eos,
        chat_template=spec.chat_template,
        model_max_length=spec.model_max_length,
    )
    if spec.extra:
        kwargs["extra_special_tokens"] = spec.extra
    return PreTrainedTokenizerFast(tokenizer_object=raw, **(kwargs | overrides))


def _around(spec: Family, vocab: dict[str, int]):
    """The post-processor adding the family's start and end tokens, or None."""
    from tokenizers import processors

    before = [spec.bos] if spec.add_bos else []
    after = [spec.eos] if spec.add_eos else []
    if not before + after:
        return None
    single = " ".join([*before, "$A", *after])
    pair = " ".join([*before, "$A", *after, "$B", *after])
    return processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, vocab[t]) for t in {*before, *after}]
    )
