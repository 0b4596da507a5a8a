"""The local model directory vLLM's real scheduler is built from: a tiny LLaVA, made here.

``ModelConfig(model=DIR)`` reads a directory under ``HF_HUB_OFFLINE=1``; vLLM's
``MultiModalBudget`` (which sizes the GPU encoder cache and the encoder compute
budget) builds the model's real processor from it. Nothing is fetched: the
directory holds a ``LlavaConfig`` (a one-layer CLIP vision tower of 28x28 images in
14x14 patches, a one-layer Llama of hidden size ``HIDDEN``), a ``tokenizers``
WordLevel tokenizer with an ``<image>`` token, and a ``LlavaProcessor`` (a
``CLIPImageProcessor`` plus that tokenizer), all written by transformers'
``save_pretrained``. No weights: the scheduler never loads the model.
``skip_tokenizer_init=True`` would spare the tokenizer, but LLaVA's processor
refuses it.
"""

from __future__ import annotations

from pathlib import Path

#: The text model's hidden size: the encoder output's width, so one EC block
#: (one row of the output, in float16) is ``HIDDEN * 2`` bytes.
HIDDEN = 64
#: The ``<image>`` token's id in the tokenizer (the placeholder of every item's rows).
IMAGE_TOKEN_ID = 3
#: The plain words of the tokenizer (``w0`` ...), the prompts' text.
WORDS = 60
#: The files ``write_model_dir`` makes; a directory holding them all is reused.
FILES = ("config.json", "processor_config.json", "tokenizer.json", "tokenizer_config.json")


def vocabulary() -> dict[str, int]:
    """The tokenizer's words and ids: the specials, ``<image>``, then ``WORDS`` words."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<image>": IMAGE_TOKEN_ID}
    for index in range(WORDS):
        vocab[f"w{index}"] = len(vocab)
    return vocab


def write_model_dir(directory: Path) -> Path:
    """Write the tiny LLaVA's config, tokenizer and processor into ``directory``
    (made if missing; left as it is if it already holds ``FILES``); its cost is
    transformers' import (docs/MEASURED.md, "Commands' run times"). Returns
    ``directory``."""
    if all((directory / name).is_file() for name in FILES):
        return directory
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    directory.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    words = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=words, unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
        projection_dim=32,
    )
    text = LlamaConfig(
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=len(vocab) + 1,
        max_position_embeddings=1 << 16,
    )
    config = LlavaConfig(vision_config=vision, text_config=text, image_token_index=IMAGE_TOKEN_ID)
    config.architectures = ["LlavaForConditionalGeneration"]
    config.save_pretrained(directory)
    images = CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(  # type: ignore[no-untyped-call]
        image_processor=images,
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        image_token="<image>",
    )
    processor.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
