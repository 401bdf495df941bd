"""NeMo-RL policy configs: `policy.megatron_cfg.fp8_cfg` and the Megatron keys beside it.

NeMo-RL builds a Megatron-Bridge model provider (a Megatron `TransformerConfig`) from the
Hugging Face checkpoint and then copies `megatron_cfg` onto it
(NVIDIA-NeMo/RL `nemo_rl/models/megatron/setup.py` @7ea279ab):

- only when `fp8_cfg.enabled` is true are `fp8` (the format), `fp8_recipe` and `fp8_param`
  copied, and all three must then be present (a missing one raises `KeyError`); every other
  FP8 field keeps `TransformerConfig`'s default (margin 0, history 1, `most_recent`);
- `tensor_model_parallel_size`, `pipeline_model_parallel_size`, `context_parallel_size`,
  `expert_model_parallel_size` and `sequence_parallel` are copied as written;
- `activation_checkpointing: true` sets `recompute_granularity` (default `full`);
  `activation_checkpointing: false` means no recompute;
- the Megatron backend runs only when `megatron_cfg.enabled` is true
  (`nemo_rl/models/policy/lm_policy.py`), so `enabled: false` there, or in `fp8_cfg`, makes
  the FP8 block dormant.

`env_vars` are exported to the workers (`NVTE_FP8_BLOCK_SCALING_FP32_SCALES: "1"` keeps FP32
block scales for TE's blockwise recipe); the vLLM rollout's `generation.vllm_cfg.precision:
fp8` quantizes inference, not training (MXFP8 with `vllm_cfg.is_mx: true`).  Both are
recorded as notes, never as findings.  `fp8_cfg.fp8_recipe` takes Megatron's names
(`tensorwise`, `delayed`, `blockwise`, `mxfp8`; the shipped configs use `blockwise` and, in
`recipes/llm/grpo-nanov3-30ba3b-3n8g-megatron-dynamo-swe1.yaml`, `mxfp8`).  NeMo-RL has no
FP4 setting of its own at 7ea279ab (its NVFP4 configs there are ModelOpt `quant_cfg`s); later
main adds `megatron_cfg.fp4_cfg` and copies the BF16 layer keys (`fp4.py`): a file with
`fp4_cfg` and no `fp8_cfg` is an FP4 site, one with both is one site with both on.
A file's `defaults:` parents are merged before it is read (`frameworks/shared/hydra.py`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.nemo_rl import fp4
from fp8lint.frameworks.shared.base import Arg, written
from fp8lint.frameworks.shared.nvte_env import NVTE_ENV, env_value
from fp8lint.frameworks.shared.transformer_config import (
    PARALLEL_KEYS,
    Profile,
    SurfaceDefaults,
    as_bool,
    build_site,
    key_map,
)
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info, submap
from fp8lint.model import Fp8Site, Framework, Setting, SourceNote

ENV_SPELL = "policy.megatron_cfg.env_vars.{key}"
LABEL = "NeMo-RL (Megatron TransformerConfig)"
DEFAULTS = SurfaceDefaults("nemo_rl")
FP8_ENV = ("NVTE_FP8_BLOCK_SCALING_FP32_SCALES",)
# the only keys NeMo-RL copies from fp8_cfg: a fix can write nothing else there
CFG_KEYS = {"fmt": "fp8", "recipe": "fp8_recipe", "fp8_param_gather": "fp8_param"}
# copied from `megatron_cfg` onto the provider when written (`_apply_precision_config`, `fp4`)
BF16_KEYS = ("first_last_layers_bf16", "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16")


def _spell(name: str) -> str:
    inside = name in ("fp8", "fp8_recipe", "fp8_param")
    return f"policy.megatron_cfg.{'fp8_cfg.' if inside else ''}{name}"


KEYS = key_map(_spell)


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    policy = submap(root, "policy")
    quant = _fake_quant(file, root, policy)
    megatron = submap(policy, "megatron_cfg")
    if megatron is None:
        return quant
    fp8_pair, fp4_pair = (_block(megatron, name) for name in ("fp8_cfg", "fp4_cfg"))
    if fp8_pair is None and fp4_pair is None:
        return quant
    return [*_fp8_site(file, doc, root, policy, megatron, fp8_pair, fp4_pair), *quant]


def _block(megatron: Node, name: str) -> tuple[Node, Node] | None:
    pair = megatron.get(name)
    return pair if pair is not None and pair[1].deref().is_map else None


# `policy.quant_cfg`: a ModelOpt preset name (`NVFP4_DEFAULT_CFG`) or a recipe YAML path
# that `nemo_rl/modelopt/utils.py` `resolve_quant_cfg` turns into ModelOpt's config
# (NVIDIA-NeMo/RL @7ea279ab; `nemo_rl/models/policy/__init__.py` L598-603); null is off
_FAKE_NOTE = (
    "ModelOpt fake quantization (QAT/QAD): quantize-dequantize in the forward pass, a "
    "straight-through backward, high-precision weights; no FP8/FP4 scaling rule applies"
)


def _fake_quant(file: SourceFile, root: Node, policy: Node | None) -> list[Fp8Site]:
    if policy is None or policy.get("quant_cfg") is None:
        return []
    arg = args_of_map(file, root, ("policy",), policy, "policy.{key}").get("quant_cfg")
    if arg is None or (arg.known and arg.value is None):
        return []
    enabled = written(arg, True if arg.known else None, _FAKE_NOTE)
    recipe = Setting[Any].model_construct(
        known=False, key=arg.key, note=f"ModelOpt `{arg.raw}`: fake quantization, not modelled"
    )
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework="nemo_rl",
            kind=f"NeMo-RL ModelOpt quantization-aware training (`policy.quant_cfg: {arg.raw}`)",
            span=arg.span,
            enable_span=arg.span,
            enabled=enabled,
            recipe=recipe,
        )
    ]


def _fp8_site(
    file: SourceFile,
    doc: Document,
    root: Node,
    policy: Node | None,
    megatron: Node,
    fp8_pair: tuple[Node, Node] | None,
    fp4_pair: tuple[Node, Node] | None,
) -> list[Fp8Site]:
    base = ("policy", "megatron_cfg")
    spell = "policy.megatron_cfg.{key}"
    outer = args_of_map(file, root, base, megatron, spell)
    inner = _inner(file, root, fp8_pair, "fp8_cfg")
    notes: list[SourceNote] = []
    pair = cast("tuple[Node, Node]", fp8_pair or fp4_pair)

    switch = inner.get("enabled")
    backend = outer.get("enabled")
    enabled: Setting[bool]
    if backend is not None and backend.known and as_bool(backend.value) is False:
        enabled = written(backend, False, "the Megatron backend is off, so fp8_cfg is not read")
    elif switch is None:
        enabled = Setting[bool].model_construct(
            value=False,
            known=True,
            provenance="default",
            key="policy.megatron_cfg.fp8_cfg.enabled",
            default_of="NeMo-RL",
        )
    elif not switch.known:
        enabled = written(switch, None)
    else:
        enabled = written(switch, bool(as_bool(switch.value)))

    fields: dict[str, Arg] = {}
    for key in PARALLEL_KEYS:
        if key in outer:
            fields[key] = outer[key]
    for key in ("fp8", "fp8_recipe"):
        if key in inner:
            fields[key] = inner[key]
    if "fp8_param" in inner:
        fields["fp8_param_gather"] = inner["fp8_param"]
    for key in BF16_KEYS:
        if key in outer:
            fields[key] = outer[key]
    fp4_fields, fp4_values = fp4.fp4_fields(
        _inner(file, root, fp4_pair, "fp4_cfg"),
        outer.get("enabled"),
        _pertoken(file, root, policy),
        pair,
    )
    fields.update(fp4_fields)
    # NeMo-RL post-trains (SFT, DPO, GRPO, distillation) the checkpoint `policy.model_name`
    # names: a fine-tune for the severity policy, never a pretraining run
    at = file.span(pair[0].start, pair[0].end)
    fields["finetune"] = Arg("policy", True, at, at, note="NeMo-RL post-trains a trained model")
    fmt_arg = fields.get("fp8")
    fmt = None
    if fmt_arg is None and fp8_pair is None:
        fmt = Setting[Any].model_construct(known=False)
    elif fmt_arg is None:
        fmt = Setting[Any].model_construct(known=False, note="no fp8_cfg.fp8 (NeMo-RL raises)")
    ckpt = outer.get("activation_checkpointing")
    if ckpt is not None and ckpt.known:
        on = as_bool(ckpt.value)
        granularity = outer.get("recompute_granularity")
        if on and granularity is not None:
            fields["recompute_granularity"] = granularity
        elif on:
            fields["recompute_granularity"] = replace(
                ckpt, value="full", note="activation_checkpointing defaults to full recompute"
            )
    env = submap(megatron, "env_vars")
    env_fields: dict[str, Setting[Any]] = {}
    if env is not None:
        for name, arg in args_of_map(file, root, (*base, "env_vars"), env, ENV_SPELL).items():
            if name in NVTE_ENV:
                env_fields[NVTE_ENV[name][0]] = _env_setting(arg, NVTE_ENV[name][1])
            if name in FP8_ENV:
                notes.append(
                    SourceNote.model_construct(
                        kind="env",
                        key=name,
                        span=arg.span,
                        message=f"`{name}={arg.raw}` is exported to the Megatron workers "
                        "(FP32 instead of power-of-2 scales for TE's blockwise recipe)",
                    )
                )
    vllm = submap(submap(policy, "generation"), "vllm_cfg")
    if vllm is not None:
        prec = vllm.get("precision")
        if prec is not None and str(prec[1].deref().value).lower() == "fp8":
            # `is_mx: true` makes them ModelOpt MXFP8 (vllm/quantization/fp8.py L191-214)
            mx = vllm.get("is_mx")
            blocks = "MXFP8" if mx is not None and mx[1].deref().value is True else "FP8"
            notes.append(
                SourceNote.model_construct(
                    kind="inference",
                    key="policy.generation.vllm_cfg.precision",
                    span=file.span(prec[0].start, prec[1].end),
                    message=f"vLLM rollouts run in {blocks}: inference quantization, "
                    "not FP8 training",
                )
            )
    profile = Profile(
        framework=Framework.BRIDGE,
        label=LABEL,
        defaults=DEFAULTS,
        surface="nemo_rl",
        keys=KEYS,
        kind="NeMo-RL policy.megatron_cfg." + ("fp8_cfg" if fp8_pair is not None else "fp4_cfg"),
        edit=edit_info(file, doc, pair[1].deref(), CFG_KEYS if fp8_pair else {}, after_fp8=False),
    )
    site = build_site(
        fields, profile, file.path, file.span(pair[0].start, pair[1].end), notes=notes
    )
    if fmt_arg is not None:
        fmt = site.fmt
    fp4_switch = fp4_values.pop("enable_span", None)
    update: dict[str, Any] = {"enabled": enabled, "fmt": fmt, **env_fields, **fp4_values}
    update["precision_overrides"] = fp4.precision_file(outer.get("te_precision_config_file"))
    fp8_on = enabled.written and enabled.value is not False
    update["enable_span"] = enabled.span if fp8_on or fp4_switch is None else fp4_switch
    format4 = update.get("fp4", site.fp4)
    if enabled.value is True and fp4_switch is not None and not format4.value:
        # NeMo-RL refuses on the two switches, whatever the format (FP8403's own check
        # needs a known FP4 format)
        update["notes"] = [*site.notes, fp4.both_on(fp4_switch)]
    if ckpt is not None and ckpt.known and as_bool(ckpt.value) is False:
        update["recompute_granularity"] = written(ckpt, None, "activation_checkpointing is off")
    return [site.model_copy(update=update)]


def _inner(
    file: SourceFile, root: Node, pair: tuple[Node, Node] | None, name: str
) -> dict[str, Arg]:
    if pair is None:
        return {}
    at = ("policy", "megatron_cfg", name)
    return args_of_map(file, root, at, pair[1].deref(), f"policy.megatron_cfg.{name}.{{key}}")


def _pertoken(file: SourceFile, root: Node, policy: Node | None) -> Arg | None:
    """`generation.nvfp4_pertoken_rollout.enabled` when written true: NeMo-RL then requires
    `fp4_cfg` {enabled, e2m1, nvfp4, fp4_param false} and raises otherwise (`fp4`)."""
    block = submap(submap(policy, "generation"), "nvfp4_pertoken_rollout")
    if block is None:
        return None
    at = ("policy", "generation", "nvfp4_pertoken_rollout")
    arg = args_of_map(file, root, at, block, "policy.generation.nvfp4_pertoken_rollout.{key}")
    switch = arg.get("enabled")
    return switch if switch is not None and switch.known and switch.value is True else None


def _env_setting(arg: Arg, boolean: bool) -> Setting[Any]:
    """An `env_vars` entry as TE reads it (`nvte_env`): a string or an integer as its text;
    any other YAML value (a boolean, a list) is not a text whose conversion is known."""
    value = arg.value
    if arg.known and isinstance(value, str | int) and not isinstance(value, bool):
        return written(arg, env_value(str(value), boolean))
    return written(replace(arg, known=False), None)
