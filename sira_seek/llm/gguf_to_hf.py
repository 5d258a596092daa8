"""Convert a Gemma 3 GGUF into a Hugging Face folder vLLM can serve (run with vLLM's Python).

    <vllm-python> gguf_to_hf.py --gguf MODEL.gguf --out FOLDER

vLLM has no in-tree GGUF loader, so the packaged Gemma 3 270M (Q4_K_M) is dequantized once by
transformers into float32 safetensors. Run as a script by the Python of vLLM's environment (it
needs torch, transformers and gguf; sira-seek's own environment has none of them), so it
imports nothing from sira-seek.

The tokenizer transformers builds from a GGUF lacks what Gemma needs, and without it the output
degenerates ("France. The The The ..."): it adds no ``<bos>``, has no chat template and stops only
at ``<eos>``. Those are set here: ``<bos>`` first, Gemma's turn template (a system message is
folded into the first user turn, as Gemma's own template does) and end ids ``<eos>`` and
``<end_of_turn>``. The folder is written to a temporary name and renamed, so a killed conversion
never leaves a half folder that looks ready.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% set system = '' %}"
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set system = messages[0]['content'] | trim + '\n\n' %}"
    "{% set messages = messages[1:] %}"
    "{% endif %}"
    "{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n"
    "{% if loop.first %}{{ system }}{% endif %}"
    "{{ message['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
    shutil.rmtree(tmp, ignore_errors=True)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    # A GGUF load may leave a quantizer/quantization config behind; the weights are plain
    # float32 now, and vLLM must not look for a GGUF quantization method.
    if hasattr(model, "hf_quantizer"):
        model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.generation_config.eos_token_id = [1, 106]  # <eos>, <end_of_turn>
    model.generation_config.bos_token_id = 2
    model.save_pretrained(str(tmp), safe_serialization=True)

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.add_bos_token = True
    tokenizer.chat_template = GEMMA_CHAT_TEMPLATE
    tokenizer.save_pretrained(str(tmp))
    _force_bos(tmp)

    config = json.loads((tmp / "config.json").read_text())
    config.pop("quantization_config", None)
    config["eos_token_id"] = [1, 106]
    config["bos_token_id"] = 2
    (tmp / "config.json").write_text(json.dumps(config, indent=2))
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)


def _force_bos(folder: Path) -> None:
    """Make every tokenizer config in ``folder`` prepend ``<bos>`` (fast tokenizers keep it in
    the post-processor, slow ones in ``add_bos_token``)."""
    cfg_path = folder / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["add_bos_token"] = True
    cfg["add_eos_token"] = False
    cfg["chat_template"] = GEMMA_CHAT_TEMPLATE
    cfg_path.write_text(json.dumps(cfg, indent=2))
    tok_path = folder / "tokenizer.json"
    if tok_path.exists():
        tok = json.loads(tok_path.read_text())
        tok["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "<bos>", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": "<bos>", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
            ],
            "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}},
        }
        tok_path.write_text(json.dumps(tok))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gguf", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    convert(args.gguf, args.out)
    print(f"converted {args.gguf} -> {args.out}")


if __name__ == "__main__":
    main()
