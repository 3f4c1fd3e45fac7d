"""Tiny random instances of the registry's REAL diffusers pipeline classes (issue 10), built in
code as diffusers' own tests/pipelines/<name>/test_*.py build theirs, and saved with
`save_pretrained` so the project's loader (`diffusers_generator.load_pipeline`) reads them as it
reads a hub snapshot. Tokenizers cannot be downloaded here: each is the byte-level BPE trained
in code (tiny.train_byte_level_tokenizer) wrapped as a fast tokenizer. Sizes: hidden 16-32,
1-2 layers, 4-16 latent channels; a 2-step 32x32 draw takes well under a second each.

`TINY_PIPELINES` maps a registry pipeline class to its builder; `tiny_spec` turns a registry
row into the row that loads the tiny folder with the row's own call settings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ingestion.backends.api.generators import GeneratorSpec
from ingestion.backends.tiny.models import QWEN_CHAT_TEMPLATE, train_byte_level_tokenizer

TINY_SIZE = 32  # pixels per side of a tiny draw
TINY_STEPS = 2


def tiny_tokenizer(**kwargs):
    """A fast tokenizer over the byte-level BPE trained in code (Qwen's special tokens)."""
    from transformers import PreTrainedTokenizerFast

    defaults = dict(
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=QWEN_CHAT_TEMPLATE,
    )
    kwargs = defaults | kwargs
    raw = kwargs.pop("tokenizer_object", None) or train_byte_level_tokenizer()
    return PreTrainedTokenizerFast(tokenizer_object=raw, **kwargs)


def _vocab(tokenizer) -> int:
    return len(tokenizer)


# ------------------------------------------------------------------------------- Qwen-Image


def build_tiny_qwen_image(folder: Path, seed: int = 0) -> Path:
    """QwenImagePipeline (transformer 2 layers, 3 heads of 16; Qwen2.5-VL text encoder hidden
    16; the 3D VAE with 4 latent channels), as diffusers' test_qwenimage.py configures it."""
    import torch
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImagePipeline,
        QwenImageTransformer2DModel,
    )

    tokenizer = tiny_tokenizer()
    torch.manual_seed(seed)
    transformer = QwenImageTransformer2DModel(
        patch_size=2,
        in_channels=16,
        out_channels=4,
        num_layers=2,
        attention_head_dim=16,
        num_attention_heads=3,
        joint_attention_dim=16,
        guidance_embeds=False,
        axes_dims_rope=(8, 4, 4),
    )
    z_dim = 4
    vae = AutoencoderKLQwenImage(
        base_dim=z_dim * 6,
        z_dim=z_dim,
        dim_mult=[1, 2, 4],
        num_res_blocks=1,
        temperal_downsample=[False, True],
        latents_mean=[0.0] * z_dim,
        latents_std=[1.0] * z_dim,
    )
    text_encoder = _tiny_qwen25_vl(_vocab(tokenizer))
    pipe = QwenImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        transformer=transformer,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


# ------------------------------------------------------------------------------ ERNIE-Image


def _tiny_mistral_text(vocab: int, hidden: int = 16) -> dict:
    return {
        "model_type": "mistral",
        "vocab_size": vocab,
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": hidden // 2,
        "max_position_embeddings": 512,
    }


_TINY_PIXTRAL = {
    "model_type": "pixtral",
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "head_dim": 8,
    "patch_size": 4,
    "image_size": 16,
}


def build_tiny_ernie_image(folder: Path, seed: int = 0, with_pe: bool = True) -> Path:
    """ErnieImagePipeline: transformer hidden 32 (2 heads, 1 layer), the Flux2 VAE with 4 latent
    channels (16 after its 2x2 patchify), a Mistral3 text encoder (hidden 16) and, with `with_pe`,
    the prompt enhancer `pe` (a Ministral3 causal LM) that `use_pe` switches on."""
    import torch
    from diffusers import (
        AutoencoderKLFlux2,
        ErnieImagePipeline,
        ErnieImageTransformer2DModel,
        FlowMatchEulerDiscreteScheduler,
    )
    from transformers import Ministral3Config, Ministral3ForCausalLM, Mistral3Config, Mistral3Model

    tokenizer = tiny_tokenizer()
    vocab = _vocab(tokenizer)
    torch.manual_seed(seed)
    transformer = ErnieImageTransformer2DModel(
        hidden_size=32,
        num_attention_heads=2,
        num_layers=1,
        ffn_hidden_size=64,
        in_channels=16,
        out_channels=16,
        patch_size=1,
        text_in_dim=16,
        rope_axes_dim=(4, 6, 6),
    )
    vae = AutoencoderKLFlux2(
        block_out_channels=(16, 32),
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=16,
        sample_size=TINY_SIZE,
    )
    text_encoder = Mistral3Model(
        Mistral3Config(
            text_config=_tiny_mistral_text(vocab),
            vision_config=_TINY_PIXTRAL,
        )
    ).eval()
    pe = pe_tokenizer = None
    if with_pe:
        text = _tiny_mistral_text(vocab)
        text.pop("model_type")
        pe = Ministral3ForCausalLM(
            Ministral3Config(**text, pad_token_id=0, bos_token_id=None, eos_token_id=None)
        ).eval()
        pe_tokenizer = tiny_tokenizer(model_max_length=4)
    pipe = ErnieImagePipeline(
        transformer=transformer,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=FlowMatchEulerDiscreteScheduler(),
        pe=pe,
        pe_tokenizer=pe_tokenizer,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


# ---------------------------------------------------------------------------- LongCat-Image


_MROPE = {"mrope_section": [1, 1, 2], "rope_type": "default", "rope_theta": 1e6}


def _tiny_qwen25_vl(vocab: int, hidden: int = 16):
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    config = Qwen2_5_VLConfig(
        text_config={
            "hidden_size": hidden,
            "intermediate_size": hidden,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "rope_parameters": {
                "mrope_section": [1, 1, 2],
                "rope_type": "default",
                "rope_theta": 1e6,
            },
            "vocab_size": vocab,
            "bos_token_id": 0,
            "eos_token_id": 0,
        },
        vision_config={
            "depth": 1,
            "hidden_size": hidden,
            "intermediate_size": hidden,
            "num_heads": 2,
            "out_hidden_size": hidden,
        },
        vocab_size=vocab,
    )
    return Qwen2_5_VLForConditionalGeneration(config).eval()


def _tiny_vae_kl(latent_channels: int, blocks: int = 2):
    from diffusers import AutoencoderKL

    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        block_out_channels=(16, 32, 32, 32)[:blocks],
        down_block_types=("DownEncoderBlock2D",) * blocks,
        up_block_types=("UpDecoderBlock2D",) * blocks,
        layers_per_block=1,
        latent_channels=latent_channels,
        norm_num_groups=16,
        sample_size=TINY_SIZE,
        shift_factor=0.0,
    )


def build_tiny_longcat_image(folder: Path, seed: int = 0) -> Path:
    """LongCatImagePipeline: transformer 1 double + 1 single block (2 heads of 16), a KL VAE with
    the 16 latent channels the pipeline hard-codes and a Qwen2.5-VL text encoder (hidden 16). The
    prompt rewriter's `text_processor` is a Qwen2-VL processor on the hub; its video half needs
    torchvision, which the CPU install lacks, so the tokenizer stands in for it (the rewriter
    only applies the chat template, tokenises, and decodes: text that a tokenizer does alone)."""
    import torch
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        LongCatImagePipeline,
        LongCatImageTransformer2DModel,
    )

    tokenizer = tiny_tokenizer()
    torch.manual_seed(seed)
    transformer = LongCatImageTransformer2DModel(
        patch_size=1,
        in_channels=64,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=16,
        pooled_projection_dim=16,
        axes_dims_rope=[4, 6, 6],
    )
    pipe = LongCatImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_tiny_vae_kl(16),
        text_encoder=_tiny_qwen25_vl(_vocab(tokenizer)),
        tokenizer=tokenizer,
        text_processor=tokenizer,
        transformer=transformer,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


# ------------------------------------------------------------------- FLUX.2-dev / FLUX.2-Klein


def _tiny_flux2_vae():
    from diffusers import AutoencoderKLFlux2

    return AutoencoderKLFlux2(
        block_out_channels=(16, 32),
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=16,
        sample_size=TINY_SIZE,
    )


def _tiny_flux2_transformer(text_hidden: int, guidance_embeds: bool):
    """1 double + 1 single block, 2 heads of 16; text features are 3 stacked encoder layers."""
    from diffusers import Flux2Transformer2DModel

    return Flux2Transformer2DModel(
        patch_size=1,
        in_channels=16,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=3 * text_hidden,
        timestep_guidance_channels=32,
        axes_dims_rope=(4, 4, 4, 4),
        guidance_embeds=guidance_embeds,
    )


def build_tiny_flux2(folder: Path, seed: int = 0) -> Path:
    """Flux2Pipeline with a Mistral3 text encoder of 30 layers (hidden 8: the pipeline stacks
    hidden states 10, 20 and 30, its default `text_encoder_out_layers`, so the call keeps the
    row's settings). The hub's tokenizer is a Pixtral processor whose image half is unused for
    text-to-image; the tiny tokenizer (with a chat template) stands in for it."""
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, Flux2Pipeline
    from transformers import Mistral3Config, Mistral3ForConditionalGeneration

    tokenizer = tiny_tokenizer()
    hidden = 8
    text = _tiny_mistral_text(_vocab(tokenizer), hidden=hidden) | {"num_hidden_layers": 30}
    torch.manual_seed(seed)
    text_encoder = Mistral3ForConditionalGeneration(
        Mistral3Config(text_config=text, vision_config=_TINY_PIXTRAL)
    ).eval()
    pipe = Flux2Pipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_tiny_flux2_vae(),
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        transformer=_tiny_flux2_transformer(hidden, guidance_embeds=True),
    )
    pipe.save_pretrained(folder)
    return Path(folder)


def build_tiny_flux2_klein(folder: Path, seed: int = 0, is_distilled: bool = True) -> Path:
    """Flux2KleinPipeline (step-distilled, as the 4B/9B rows are) with a Qwen3 text encoder of 27
    layers (hidden 8; hidden states 9, 18, 27 are the default `text_encoder_out_layers`)."""
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, Flux2KleinPipeline
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = tiny_tokenizer()
    hidden = 8
    torch.manual_seed(seed)
    text_encoder = Qwen3ForCausalLM(
        Qwen3Config(
            vocab_size=_vocab(tokenizer),
            hidden_size=hidden,
            intermediate_size=2 * hidden,
            num_hidden_layers=27,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=hidden // 2,
            max_position_embeddings=1024,
        )
    ).eval()
    pipe = Flux2KleinPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_tiny_flux2_vae(),
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        transformer=_tiny_flux2_transformer(hidden, guidance_embeds=False),
        is_distilled=is_distilled,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


# -------------------------------------------------------------------------------- Z-Image


def build_tiny_z_image(folder: Path, seed: int = 0) -> Path:
    """ZImagePipeline: the single-stream transformer (dim 32, 2 heads, 1 layer + 1 refiner
    layer), a KL VAE with 16 latent channels and a Qwen3 text encoder (hidden 16)."""
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, ZImagePipeline, ZImageTransformer2DModel
    from transformers import Qwen3Config, Qwen3Model

    tokenizer = tiny_tokenizer()
    torch.manual_seed(seed)
    transformer = ZImageTransformer2DModel(
        all_patch_size=(2,),
        all_f_patch_size=(1,),
        in_channels=16,
        dim=32,
        n_layers=1,
        n_refiner_layers=1,
        n_heads=2,
        n_kv_heads=2,
        cap_feat_dim=16,
        axes_dims=[4, 6, 6],
        axes_lens=[64, 32, 32],
    )
    text_encoder = Qwen3Model(
        Qwen3Config(
            vocab_size=_vocab(tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=8,
            max_position_embeddings=1024,
        )
    ).eval()
    pipe = ZImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_tiny_vae_kl(16),
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        transformer=transformer,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


# ------------------------------------------------------------------------------- FLUX.1-dev


def _tiny_clip(cls_name: str, vocab: int, max_positions: int, hidden: int = 32):
    import transformers

    config = transformers.CLIPTextConfig(
        vocab_size=vocab,
        hidden_size=hidden,
        intermediate_size=37,
        num_hidden_layers=1,
        num_attention_heads=2,
        max_position_embeddings=max_positions,
        projection_dim=hidden,
        bos_token_id=0,
        eos_token_id=2,
        pad_token_id=1,
    )
    return getattr(transformers, cls_name)(config).eval()


def _tiny_t5(vocab: int, d_model: int = 32):
    from transformers import T5Config, T5EncoderModel

    return T5EncoderModel(
        T5Config(
            vocab_size=vocab,
            d_model=d_model,
            d_kv=8,
            d_ff=37,
            num_layers=1,
            num_heads=2,
            relative_attention_num_buckets=8,
        )
    ).eval()


def build_tiny_flux1(folder: Path, seed: int = 0) -> Path:
    """FluxPipeline (guidance-distilled, `guidance_embeds`): 1 double + 1 single block (2 heads
    of 16), CLIP (hidden 32) and T5 (d_model 32) text encoders, a KL VAE with 4 latent
    channels (16 after 2x2 packing)."""
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, FluxPipeline, FluxTransformer2DModel

    tokenizer = tiny_tokenizer(model_max_length=16)
    tokenizer_2 = tiny_tokenizer(model_max_length=32)
    vocab = _vocab(tokenizer)
    torch.manual_seed(seed)
    transformer = FluxTransformer2DModel(
        patch_size=1,
        in_channels=16,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=32,
        pooled_projection_dim=32,
        guidance_embeds=True,
        axes_dims_rope=(4, 6, 6),
    )
    pipe = FluxPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_tiny_vae_kl(4),
        text_encoder=_tiny_clip("CLIPTextModel", vocab, 16),
        tokenizer=tokenizer,
        text_encoder_2=_tiny_t5(vocab),
        tokenizer_2=tokenizer_2,
        transformer=transformer,
    )
    pipe.save_pretrained(folder)
    return Path(folder)


# ------------------------------------------------------------------------------- HiDream-I1


def build_tiny_llama_text_encoder(folder: Path, seed: int = 0, hidden: int = 16) -> Path:
    """A 2-layer LlamaForCausalLM (hidden 16) and its tokenizer: HiDream-I1's fourth text
    encoder, which the hub repo leaves out and the loader fetches apart (`extra_components`)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer(model_max_length=32)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=_vocab(tokenizer),
            hidden_size=hidden,
            intermediate_size=2 * hidden,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=256,
        )
    ).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)


def build_tiny_hidream_i1(folder: Path, seed: int = 0) -> Path:
    """HiDreamImagePipeline WITHOUT `text_encoder_4` / `tokenizer_4` (as on the hub); the Llama
    they name is `build_tiny_llama_text_encoder`'s, in `<folder>/../<folder name>-llama`.
    Transformer: 1 double + 1 single MoE block (4 heads of 8, 4 experts), two CLIPs with
    projection (hidden 32), T5 (d_model 32), a KL VAE with 4 latent channels."""
    import torch
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        HiDreamImagePipeline,
        HiDreamImageTransformer2DModel,
    )

    folder = Path(folder)
    tokenizer = tiny_tokenizer(model_max_length=128)
    vocab = _vocab(tokenizer)
    torch.manual_seed(seed)
    transformer = HiDreamImageTransformer2DModel(
        patch_size=2,
        in_channels=4,
        out_channels=4,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=8,
        num_attention_heads=4,
        caption_channels=[32, 16],
        text_emb_dim=64,
        num_routed_experts=4,
        num_activated_experts=2,
        axes_dims_rope=(4, 2, 2),
        max_resolution=(32, 32),
        llama_layers=(0, 1),
    )
    pipe = HiDreamImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_tiny_vae_kl(4),
        text_encoder=_tiny_clip("CLIPTextModelWithProjection", vocab, 128),
        tokenizer=tokenizer,
        text_encoder_2=_tiny_clip("CLIPTextModelWithProjection", vocab, 128),
        tokenizer_2=tokenizer,
        text_encoder_3=_tiny_t5(vocab),
        tokenizer_3=tokenizer,
        text_encoder_4=None,
        tokenizer_4=None,
        transformer=transformer,
    )
    pipe.save_pretrained(folder)
    build_tiny_llama_text_encoder(hidream_llama_folder(folder))
    return folder


def hidream_llama_folder(folder: Path) -> Path:
    return Path(folder).parent / f"{Path(folder).name}-llama"


# ------------------------------------------------------------------------------- GLM-Image

GLM_SPECIALS = {"image_token": "<|image|>", "grid_bos_token": "<grid>", "grid_eos_token": "</grid>"}
GLM_CODEBOOK, GLM_VISION_VOCAB = 64, 80  # prior codebook ids 0-63, then the image start/end ids


def _tiny_glm_processor():
    """(the raw byte-level tokenizer, the GlmImageProcessor around it): the tiny Qwen chat
    template, GLM's special tokens and `<sop>` as the start token."""
    from transformers import GlmImageImageProcessorPil, GlmImageProcessor

    raw = train_byte_level_tokenizer()
    raw.add_special_tokens([*GLM_SPECIALS.values(), "<sop>"])
    tokenizer = tiny_tokenizer(
        tokenizer_object=raw, bos_token="<sop>", extra_special_tokens=GLM_SPECIALS
    )
    processor = GlmImageProcessor(
        image_processor=GlmImageImageProcessorPil(),
        tokenizer=tokenizer,
        chat_template=QWEN_CHAT_TEMPLATE,
    )
    return raw, processor


def _tiny_glm_vision_language_model(raw):
    """The autoregressive stage: text hidden 16, a 1-block vision tower and the VQ prior; its
    end-of-image id is beyond the vision head, so it is never sampled."""
    from transformers import GlmImageConfig, GlmImageForConditionalGeneration

    return GlmImageForConditionalGeneration(
        GlmImageConfig(
            text_config={
                "vocab_size": 512,
                "vision_vocab_size": GLM_VISION_VOCAB,
                "hidden_size": 16,
                "intermediate_size": 32,
                "num_hidden_layers": 1,
                "num_attention_heads": 2,
                "num_key_value_heads": 1,
                "max_position_embeddings": 1024,
                "pad_token_id": raw.token_to_id("<|endoftext|>"),
                "eos_token_id": GLM_VISION_VOCAB + 1,  # beyond the vision head: never sampled
                "rope_parameters": {
                    "rope_type": "default",
                    "rope_theta": 10000.0,
                    "mrope_section": [1, 1, 2],
                },
            },
            vision_config={
                "depth": 1,
                "hidden_size": 16,
                "num_heads": 2,
                "intermediate_size": 32,
                "image_size": 32,
                "patch_size": 16,
            },
            vq_config={"embed_dim": 16, "num_embeddings": GLM_CODEBOOK, "latent_channels": 16},
            image_token_id=raw.token_to_id(GLM_SPECIALS["image_token"]),
            image_start_token_id=GLM_CODEBOOK,
            image_end_token_id=GLM_CODEBOOK + 1,
        )
    ).eval()


def _tiny_glm_transformer():
    """The DiT: 2 layers of 2 heads of 8, embedding every id of the vision vocabulary."""
    from diffusers import GlmImageTransformer2DModel

    return GlmImageTransformer2DModel(
        patch_size=2,
        in_channels=4,
        out_channels=4,
        num_layers=2,
        attention_head_dim=8,
        num_attention_heads=2,
        text_embed_dim=32,
        time_embed_dim=16,
        condition_dim=8,
        prior_vq_quantizer_codebook_size=GLM_VISION_VOCAB,  # any sampled id embeds
    )


def _tiny_glm_vae():
    """A 4-block KL VAE (scale 8, as the real one) with unit latent statistics."""
    vae = _tiny_vae_kl(4, blocks=4)
    vae.register_to_config(latents_mean=[0.0] * 4, latents_std=[1.0] * 4)
    return vae


def build_tiny_glm_image(folder: Path, seed: int = 0) -> Path:
    """GlmImagePipeline: the autoregressive stage (a GlmImage model, text hidden 16, vision
    vocabulary 80 whose ids 0-63 are the prior codebook; its end-of-image id is made
    unreachable so the 258 prior tokens of a 32x32 image are always drawn), a ByT5 glyph encoder
    (T5, d_model 32), a 4-block KL VAE (scale 8, as the real one: one prior token per 32 px) and
    the DiT (2 layers of 2 heads of 8). The DiT embeds every id of the vision vocabulary: random
    weights may sample the image start/end ids as prior tokens, which a trained model does not.
    The processor's chat template is the tiny Qwen one (GLM's own is not available offline).

    The parts are drawn from one torch seed in this order: the autoregressive stage, the DiT,
    the VAE, the glyph encoder."""
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, GlmImagePipeline
    from transformers import ByT5Tokenizer

    raw, processor = _tiny_glm_processor()
    torch.manual_seed(seed)
    ar_model = _tiny_glm_vision_language_model(raw)
    transformer = _tiny_glm_transformer()
    vae = _tiny_glm_vae()
    pipe = GlmImagePipeline(
        tokenizer=ByT5Tokenizer(),
        processor=processor,
        text_encoder=_tiny_t5(384),
        vision_language_encoder=ar_model,
        vae=vae,
        transformer=transformer,
        scheduler=FlowMatchEulerDiscreteScheduler(),
    )
    pipe.save_pretrained(folder)
    return Path(folder)


TINY_PIPELINES: dict[str, Callable[[Path], Path]] = {
    "GlmImagePipeline": build_tiny_glm_image,
    "ZImagePipeline": build_tiny_z_image,
    "FluxPipeline": build_tiny_flux1,
    "HiDreamImagePipeline": build_tiny_hidream_i1,
    "Flux2Pipeline": build_tiny_flux2,
    "Flux2KleinPipeline": build_tiny_flux2_klein,
    "LongCatImagePipeline": build_tiny_longcat_image,
    "QwenImagePipeline": build_tiny_qwen_image,
    "ErnieImagePipeline": build_tiny_ernie_image,
}


def tiny_extra_components(spec: GeneratorSpec, folder: Path) -> dict | None:
    """The row's `extra_components` with every source moved to the tiny stand-in (the class and
    keyword arguments stay the row's; a component the row leaves out, null, stays out)."""
    if not spec.extra_components:
        return None
    llama = str(hidream_llama_folder(folder))
    return {
        name: None if entry is None else {**entry, "source": llama}
        for name, entry in spec.extra_components.items()
    }


def tiny_spec(spec: GeneratorSpec, folder: Path, **changes) -> GeneratorSpec:
    """`spec` (a registry row) loading the tiny `folder`: the row's class and call settings,
    a 2-step 32x32 draw and float32 (the CPU dtype)."""
    tiny = dict(
        extra_components=tiny_extra_components(spec, folder),
        source=str(folder),
        steps=TINY_STEPS,
        width=TINY_SIZE,
        height=TINY_SIZE,
        dtype="float32",
    )
    return spec.with_overrides(**(tiny | changes))
