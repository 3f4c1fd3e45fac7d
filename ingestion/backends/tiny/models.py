"""Tiny models built in code (random weights, tokenizers trained in code) for CPU tests and bench.

Each builder saves with `save_pretrained` into a folder, so the REAL loaders
(`DiffusionPipeline.from_pretrained`, `AutoModelForImageTextToText` / `AutoProcessor`, `vllm.LLM`)
read them exactly as they read a hub snapshot. Hidden sizes are 16-64 and layers 1-2, so every
forward pass takes milliseconds. torch/diffusers/transformers are imported inside the functions.
"""

from __future__ import annotations

import json
from pathlib import Path

# How a tiny Stable Diffusion (`build_tiny_stable_diffusion`) stands in for a generator's real
# checkpoint (GeneratorSpec.with_overrides): the plain SD pipeline, 2 steps, 32x32, float32,
# called with no row-specific arguments (those belong to the real pipeline class).
TINY_SD_OVERRIDES = {
    "pipeline_class": "StableDiffusionPipeline",
    "backend": "diffusers",
    "guidance_arg": "guidance_scale",
    "call_kwargs": {},
    "extra_components": {},
    "steps": 2,
    "guidance": 1.0,
    "width": 32,
    "height": 32,
    "dtype": "float32",
}

CORPUS = (
    "yes no a photo of a red cat on a blue chair with the word hello written on a sign",
    "is there a dog is the cat red does the sign read hello is the text legible answer yes or no",
    "一只红色的猫 坐在蓝色的椅子上 牌子上写着 你好 是 否",
    '{"blocks": ["hello", "open"]} [] {} "text" json list of text blocks you can read',
    "question image describe the picture generate questions atomic visual requirement",
)
QWEN_SPECIALS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
QWEN_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# A Qwen3(-VL) Thinking checkpoint's tokens and template: `<think>` and `</think>` are added tokens
# that are not special (decoding keeps them, as Qwen3's tokenizer.json has them), and the
# generation prompt opens the reasoning (`<|im_start|>assistant\n<think>\n`), as
# Qwen3-VL-*-Thinking's chat template does.
THINK_TOKENS = ("<think>", "</think>")
QWEN_THINKING_CHAT_TEMPLATE = QWEN_CHAT_TEMPLATE.replace(
    "<|im_start|>assistant\n{% endif %}", "<|im_start|>assistant\n<think>\n{% endif %}"
)


def train_byte_level_tokenizer(vocab_size: int = 400, thinking: bool = False):
    """A byte-level BPE `tokenizers.Tokenizer` trained on CORPUS, with Qwen's special tokens and
    the single tokens 'yes' and 'no' (so a yes/no answer is one token, as in Qwen's vocabulary);
    `thinking`: THINK_TOKENS too, added last, so every other token keeps its id."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(QWEN_SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(list(CORPUS) * 4, trainer=trainer)
    tok.add_tokens(["yes", "no"])
    if thinking:
        tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in THINK_TOKENS])
    return tok


def build_tiny_qwen3_vl(
    folder: Path, seed: int = 0, experts: int = 0, thinking: bool = False
) -> Path:
    """A 2-layer Qwen3-VL (hidden 32) with its processor, saved to `folder`. `experts` > 0: the
    mixture-of-experts class instead (Qwen3VLMoeForConditionalGeneration, the default judge's
    Qwen3-VL-30B-A3B), every layer sparse with `experts` experts, 2 routed per token.
    `thinking`: a Thinking checkpoint's tokenizer (THINK_TOKENS, QWEN_THINKING_CHAT_TEMPLATE)."""
    import torch
    import transformers
    from transformers import PreTrainedTokenizerFast, Qwen2VLImageProcessorPil

    folder = Path(folder)
    raw = train_byte_level_tokenizer(thinking=thinking)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        chat_template=QWEN_THINKING_CHAT_TEMPLATE if thinking else QWEN_CHAT_TEMPLATE,
    )
    ids = {t: raw.token_to_id(t) for t in QWEN_SPECIALS}
    pixels = dict(shortest_edge=32 * 32, longest_edge=64 * 64)
    image_processor = Qwen2VLImageProcessorPil(
        patch_size=16, merge_size=2, temporal_patch_size=2, size=pixels
    )
    moe = (
        dict(
            num_experts=experts,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            decoder_sparse_step=1,
        )
        if experts
        else {}
    )
    family = "Qwen3VLMoe" if experts else "Qwen3VL"
    config = getattr(transformers, f"{family}Config")(
        text_config=dict(
            **moe,
            vocab_size=raw.get_vocab_size(),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
            max_position_embeddings=512,
            rope_parameters={
                "rope_theta": 10000.0,
                "rope_type": "default",
                "mrope_section": [4, 2, 2],
            },
            pad_token_id=ids["<|endoftext|>"],
        ),
        vision_config=dict(
            depth=1,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            patch_size=16,
            spatial_merge_size=2,
            temporal_patch_size=2,
            out_hidden_size=32,
            num_position_embeddings=16,
            deepstack_visual_indexes=[0],
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = getattr(transformers, f"{family}ForConditionalGeneration")(config).eval()
    model.save_pretrained(folder)
    # Qwen3VLProcessor needs a video processor, which needs torchvision (not in the CPU install):
    # the parts are saved separately and `load_vl_processor` composes them when AutoProcessor can't.
    tokenizer.save_pretrained(folder)
    image_processor.save_pretrained(folder)
    return folder


def build_tiny_stable_diffusion(folder: Path, seed: int = 0, sample_size: int = 32) -> Path:
    """A StableDiffusionPipeline (UNet 1 level, VAE 1 block, CLIP text 1 layer) saved to `folder`.

    The CLIP tokenizer's vocab.json/merges.txt are written here: every lower-case letter with and
    without the end-of-word mark, plus a few merges, so words tokenise without an unknown token.
    """
    import torch
    from diffusers import (
        AutoencoderKL,
        EulerDiscreteScheduler,
        StableDiffusionPipeline,
        UNet2DConditionModel,
    )
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    folder = Path(folder)
    tok_dir = folder / "_clip_tokenizer_files"
    tok_dir.mkdir(parents=True, exist_ok=True)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    tokens = ["<|startoftext|>", "<|endoftext|>", *letters, *(c + "</w>" for c in letters)]
    merges = ["c a", "ca t</w>", "d o", "do g</w>"]
    tokens += ["ca", "cat</w>", "do", "dog</w>"]
    (tok_dir / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}))
    (tok_dir / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    tokenizer = CLIPTokenizer(
        str(tok_dir / "vocab.json"), str(tok_dir / "merges.txt"), model_max_length=16
    )
    torch.manual_seed(seed)
    text_encoder = CLIPTextModel(
        CLIPTextConfig(
            vocab_size=len(tokens),
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=16,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
            projection_dim=32,
        )
    )
    unet = UNet2DConditionModel(
        sample_size=sample_size // 4,
        in_channels=4,
        out_channels=4,
        block_out_channels=(32, 64),
        layers_per_block=1,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=8,
        norm_num_groups=16,
    )
    vae = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        block_out_channels=(16, 32, 32),
        down_block_types=("DownEncoderBlock2D",) * 3,
        up_block_types=("UpDecoderBlock2D",) * 3,
        latent_channels=4,
        norm_num_groups=16,
        sample_size=sample_size,
    )
    pipe = StableDiffusionPipeline(
        unet=unet,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=EulerDiscreteScheduler(steps_offset=1),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipe.save_pretrained(folder)
    return folder


def set_text_lm_logits(model, logits: dict[int, float]) -> None:
    """Rewrite the output head of a model built by `build_tiny_text_lm` (a transformers model, or
    vLLM's own loaded copy through `LLM.apply_model`) so that the next-token logits are `logits`
    (token id -> value) and 0 for every other token, whatever the prompt.

    Its final hidden state is sqrt(hidden) * e_0 at every position, so logit_t = W[t, 0] *
    sqrt(hidden): W[t, 0] = value / sqrt(hidden) and every other entry 0.
    """
    import torch

    head = model.lm_head
    with torch.no_grad():
        head.weight.zero_()
        for token, value in logits.items():
            head.weight[token, 0] = value / head.weight.shape[1] ** 0.5
    method = getattr(head, "quant_method", None)
    if method is not None:  # vLLM's copy: its CPU GEMM reads weights packed after loading
        method.process_weights_after_loading(head)


def build_tiny_text_lm(
    folder: Path,
    logits: dict[str, float] | None = None,
    seed: int = 0,
    hidden_size: int = 64,
    thinking: bool = False,
) -> Path:
    """A 1-layer LlamaForCausalLM (hidden 64, 2 heads of 32) with the byte-level tokenizer above
    and Qwen's chat markers, saved to `folder`: text-only, for vLLM's CPU engine.

    Attention and MLP weights are random (so the engine computes and caches real K/V), but their
    output projections are zero and every token embeds as e_0, so the final hidden state is the
    same at every position and `logits` (token text -> value, others 0) are the next-token logits
    for every prompt: the answer and its logprobs are known by hand. `set_text_lm_logits`
    changes them on a loaded model. `thinking`: a Thinking checkpoint's tokenizer (THINK_TOKENS,
    QWEN_THINKING_CHAT_TEMPLATE).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    raw = train_byte_level_tokenizer(thinking=thinking)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=QWEN_THINKING_CHAT_TEMPLATE if thinking else QWEN_CHAT_TEMPLATE,
    )
    heads = 2
    config = LlamaConfig(
        vocab_size=raw.get_vocab_size(),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=1,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        head_dim=hidden_size // heads,
        max_position_embeddings=256,
        rms_norm_eps=1e-12,
        tie_word_embeddings=False,
        bos_token_id=raw.token_to_id("<|endoftext|>"),
        eos_token_id=raw.token_to_id("<|im_end|>"),
        pad_token_id=raw.token_to_id("<|endoftext|>"),
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.model.embed_tokens.weight.zero_()
        model.model.embed_tokens.weight[:, 0] = 1.0
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.model.norm.weight.fill_(1.0)
    set_text_lm_logits(model, {raw.token_to_id(t): v for t, v in (logits or {}).items()})
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
