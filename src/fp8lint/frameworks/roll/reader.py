"""ROLL pipeline configs: a worker's `strategy_args.strategy_config` for the megatron
strategies, whose keys become mcore_adapter `TrainingArguments` and are copied onto the
model's `TransformerConfig` (alibaba/ROLL @8eb27cc2: `mcore_adapter/.../training_args.py`,
`models/model_config.py` `update_with_args`, `roll/distributed/strategy/megatron_strategy.py`).

- `fp8` (the format) turns FP8 on; `fp8_param` keeps FP8 weights;
- `fp8_recipe` left out is unknown: ROLL's help text says no recipe means no FP8, while
  `update_with_args` keeps the model config's own value (Megatron Core's `delayed`) for an
  argument that is None, so the two disagree and fp8lint does not pick one;
- `additional_configs: {...}` sets any other `TransformerConfig` field (margin, history);
- the parallel sizes are written beside them; what is not written is Megatron Core's default.

ROLL post-trains (RLVR, agentic RL, DPO, distillation) a trained model: a fine-tune for the
severity policy.
"""

from __future__ import annotations

from typing import Any

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.transformer_config import Profile, SurfaceDefaults, build_site
from fp8lint.frameworks.shared.tree_args import args_of_map, submap
from fp8lint.model import Fp8Site, Framework, Setting

LABEL = "ROLL (mcore_adapter, Megatron TransformerConfig)"
DEFAULTS = SurfaceDefaults("roll")
_RECIPE_NOTE = "no fp8_recipe: ROLL's help says FP8 is off, its code keeps Megatron Core's delayed"


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    out: list[Fp8Site] = []
    for key, value in root.items():
        if key.kind != "scalar" or not isinstance(key.raw, str):
            continue
        args = submap(value.deref() if value.is_map else None, "strategy_args")
        config = submap(args, "strategy_config")
        if args is None or config is None or config.get("fp8") is None:
            continue
        name = args.get("strategy_name")
        if name is None or not str(name[1].deref().value).startswith("megatron"):
            continue  # vLLM/SGLang workers take `quantization`, not training FP8
        base = (key.raw, "strategy_args", "strategy_config")
        fields = args_of_map(file, root, base, config, ".".join(base) + ".{key}")
        extra = submap(config, "additional_configs")
        if extra is not None:
            spell = ".".join(base) + ".additional_configs.{key}"
            for k, arg in args_of_map(
                file, root, (*base, "additional_configs"), extra, spell
            ).items():
                fields.setdefault(k, arg)
        span = file.span_of(config)
        out.append(_site(file, fields, span, key.raw))
    return out


def _site(file: SourceFile, fields: dict[str, Arg], span: Any, worker: str) -> Fp8Site:
    fields["finetune"] = Arg("ROLL", True, span, span, note="ROLL post-trains a trained model")
    if "fp8_param" in fields:
        fields["fp8_param_gather"] = fields.pop("fp8_param")
    profile = Profile(
        framework=Framework.MEGATRON,
        label=LABEL,
        defaults=DEFAULTS,
        surface="roll",
        prefix=f"{worker}.strategy_args.strategy_config.",
        kind=f"ROLL {worker}.strategy_args.strategy_config",
    )
    site = build_site(fields, profile, file.path, span)
    update: dict[str, Any] = {"edit": None}
    if "fp8_recipe" not in fields:
        update["recipe"] = Setting[Any].model_construct(
            known=False, key=profile.key("fp8_recipe"), note=_RECIPE_NOTE
        )
    return site.model_copy(update=update)
