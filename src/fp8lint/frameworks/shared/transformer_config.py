"""Megatron `TransformerConfig` semantics, shared by every stack built on it.

Megatron flags, Megatron `--yaml-cfg` files, NeMo 1.x YAML, NeMo 2 `MegatronMixedPrecision`,
Megatron-Bridge `MixedPrecisionConfig` and serialized NeMo 2 configs all name the same fields
(`fp8`, `fp8_recipe`, `fp8_amax_history_len`, ...).  They differ in defaults, which is the
point: a `Profile` holds one stack's defaults (from its surface model) and how it spells a
key, and `build_site` turns the written fields into an `Fp8Site` where every missing field is
that stack's default.

Sources: Megatron-LM `megatron/core/transformer/transformer_config.py` and
`megatron/core/fp8_utils.py`; NeMo `nemo/lightning/pytorch/plugins/mixed_precision.py`;
Megatron-Bridge `src/megatron/bridge/training/mixed_precision.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.model import (
    AmaxAlgo,
    AmaxScope,
    EditInfo,
    Fp8Format,
    Fp8Site,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

RECIPES = {
    "delayed": Recipe.DELAYED,
    "tensorwise": Recipe.TENSORWISE,
    "mxfp8": Recipe.MXFP8,
    "blockwise": Recipe.BLOCKWISE,
    "custom": Recipe.CUSTOM,
}
FORMATS = {"e4m3": Fp8Format.E4M3, "hybrid": Fp8Format.HYBRID}
FP4_RECIPES = {"nvfp4": "nvfp4", "custom": "custom"}
ALGOS = {"max": AmaxAlgo.MAX, "most_recent": AmaxAlgo.MOST_RECENT}
GATED_ACTIVATIONS = {"swiglu", "fast-swiglu", "geglu", "fast-geglu", "reglu", "fast-reglu"}

# model field <- TransformerConfig field, with the value type it needs
INT_FIELDS: dict[str, str] = {
    "margin": "fp8_margin",
    "interval": "fp8_interval",
    "amax_history_len": "fp8_amax_history_len",
    "num_layers_at_start_in_bf16": "num_layers_at_start_in_bf16",
    "num_layers_at_end_in_bf16": "num_layers_at_end_in_bf16",
    "tensor_parallel": "tensor_model_parallel_size",
    "pipeline_parallel": "pipeline_model_parallel_size",
    "context_parallel": "context_parallel_size",
    "expert_parallel": "expert_model_parallel_size",
    "expert_tensor_parallel": "expert_tensor_parallel_size",
    "hidden_size": "hidden_size",
    "ffn_hidden_size": "ffn_hidden_size",
    "num_attention_heads": "num_attention_heads",
    "num_query_groups": "num_query_groups",
    "num_layers": "num_layers",
    "num_experts": "num_moe_experts",
    "moe_ffn_hidden_size": "moe_ffn_hidden_size",
    "seq_length": "seq_length",
    "micro_batch_size": "micro_batch_size",
    "world_size": "world_size",
    "train_steps": "train_iters",
    "global_batch_size": "global_batch_size",
    "weight_shards": "tensor_parallel_num_weight_shards",
    "expert_weight_shards": "expert_tensor_parallel_num_weight_shards",
}
BOOL_FIELDS: dict[str, str] = {
    "fp8_wgrad": "fp8_wgrad",
    "fp8_output_proj": "fp8_output_proj",
    "fp8_dpa": "fp8_dot_product_attention",
    "fp8_mha": "fp8_multi_head_attention",
    "tp_only_amax_red": "tp_only_amax_red",
    "first_last_layers_bf16": "first_last_layers_bf16",
    "fp8_param_gather": "fp8_param_gather",
    "sequence_parallel": "sequence_parallel",
    "reduce_amax": "reduce_amax",
    "moe_a2a_overlap": "overlap_moe_expert_parallel_comm",
    "fine_tune": "finetune",
    "fp4_param_gather": "fp4_param_gather",
    "distributed_optimizer": "use_distributed_optimizer",
    "optimizer_cpu_offload": "optimizer_cpu_offload",
    "reuse_grad_buf_for_mxfp8_param_ag": "reuse_grad_buf_for_mxfp8_param_ag",
    "moe_router_padding": "moe_router_padding_for_quantization",
    "moe_single_grouped_weight": "moe_single_grouped_weight",
    "batch_invariant": "batch_invariant_mode",
    "te_op_fuser": "use_transformer_engine_op_fuser",
    "moe_grouped_gemm": "moe_grouped_gemm",
    "overlap_grad_reduce": "overlap_grad_reduce",
    "overlap_param_gather": "overlap_param_gather",
    "overlap_param_gather_with_optimizer_step": "overlap_param_gather_with_optimizer_step",
    "precision_aware_optimizer": "use_precision_aware_optimizer",
}
# training strings with a default on Megatron's command line (`--optimizer adam` ...)
TRAINING_STRINGS: dict[str, str] = {
    "optimizer": "optimizer",
    "exp_avg_dtype": "exp_avg_dtype",
    "exp_avg_sq_dtype": "exp_avg_sq_dtype",
    "ckpt_format": "ckpt_format",
}
# virtual pipeline (stages per pipeline rank; 1 is off) and CUDA graphs (on unless "none")
VIRTUAL_KEYS = ("virtual_pipeline_model_parallel_size", "num_virtual_stages_per_pipeline_rank")
VP_LAYERS_KEY = "num_layers_per_virtual_pipeline_stage"
GRAPH_SWITCHES = ("enable_cuda_graph", "external_cuda_graph")
# FSDP, from either implementation's switch (`--use-torch-fsdp2`, `--use-megatron-fsdp`)
FSDP_FLAGS = ("use_torch_fsdp2", "use_megatron_fsdp")
# model field -> TransformerConfig field, for fixes that write a key
MODEL_TO_CONFIG: dict[str, str] = {
    **INT_FIELDS,
    **BOOL_FIELDS,
    "fmt": "fp8",
    "recipe": "fp8_recipe",
    "amax_compute_algo": "fp8_amax_compute_algo",
    "fp4": "fp4",
    "fp4_recipe": "fp4_recipe",
    "moe_token_dispatcher": "moe_token_dispatcher_type",
    "moe_dispatch_fwd_dtype": "moe_dispatch_fwd_dtype",
    "moe_combine_bwd_dtype": "moe_combine_bwd_dtype",
    "moe_flex_backend": "moe_flex_dispatcher_backend",
    "transformer_impl": "transformer_impl",
    "inference_graph_scope": "inference_cuda_graph_scope",
    **TRAINING_STRINGS,
}


# every TransformerConfig field a site may name as a default or derived key
SPELLED: tuple[str, ...] = (
    "fp8",
    "fp8_recipe",
    "fp8_amax_compute_algo",
    "fp4",
    "fp4_recipe",
    "moe_token_dispatcher_type",
    "moe_dispatch_fwd_dtype",
    "moe_combine_bwd_dtype",
    "moe_flex_dispatcher_backend",
    "transformer_impl",
    "inference_cuda_graph_scope",
    *FSDP_FLAGS,
    *INT_FIELDS.values(),
    *BOOL_FIELDS.values(),
    "gated_linear_unit",
    *TRAINING_STRINGS.values(),
    *VIRTUAL_KEYS,
    VP_LAYERS_KEY,
    "cuda_graph_impl",
    *GRAPH_SWITCHES,
)
# fields a surface gives a default that a site reports only when written
UNREPORTED = frozenset({"overlap_moe_expert_parallel_comm"})


class SurfaceDefaults(Mapping[str, Any]):
    """A profile's defaults: the family's surface defaults (`surfaces.defaults`; Megatron
    Core's, `tc_surface.TransformerConfigFp8`, for `None`) without `UNREPORTED` and `drop`
    (fields the stack's path does not apply).  Read on first use, so a reader's import does
    not load its surface before a file of the family is linted."""

    def __init__(self, family: str | None, *, drop: tuple[str, ...] = ()) -> None:
        self.family = family
        self.drop = frozenset(drop) | UNREPORTED
        self._values: dict[str, Any] | None = None

    @property
    def loaded(self) -> dict[str, Any]:
        if self._values is None:
            self._values = {
                k: v for k, v in _surface_defaults(self.family).items() if k not in self.drop
            }
        return self._values

    def __getitem__(self, key: str) -> Any:
        return self.loaded[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.loaded)

    def __len__(self) -> int:
        return len(self.loaded)


def _surface_defaults(family: str | None) -> dict[str, Any]:
    if family is not None:
        return surfaces.defaults(family)
    from fp8lint.frameworks.shared.tc_surface import TransformerConfigFp8

    return surfaces.defaults_of(TransformerConfigFp8)


def key_map(spell: Callable[[str], str]) -> dict[str, str]:
    """A profile's `keys`: how the stack spells each field a site may name, built once."""
    return {name: spell(name) for name in SPELLED}


# the TransformerConfig parallel sizes that stacks wrapping Megatron copy from their own
# config onto the model provider (NeMo-RL's `megatron_cfg`, verl's `<role>.megatron`)
PARALLEL_KEYS = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "expert_model_parallel_size",
    "expert_tensor_parallel_size",
    "sequence_parallel",
)


@dataclass(frozen=True)
class Profile:
    """One stack's defaults and spelling: a field is spelled `keys[name]`, else
    `prefix + name`.  `surface` is the family whose surface model validates the fields."""

    framework: str  # the family whose semantics apply (`model.Framework`)
    label: str
    defaults: Mapping[str, Any]
    surface: str = "megatron"
    prefix: str = ""
    keys: Mapping[str, str] = field(default_factory=dict)
    kind: str = "TransformerConfig fields"
    edit: EditInfo | None = None
    # NeMo 1.x: keys the stack reads but does not forward on its default path
    ignored: dict[str, str] = field(default_factory=dict)

    def key(self, name: str) -> str:
        return self.keys.get(name) or self.prefix + name


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


# model field, TransformerConfig field, and the choice table its validated value maps through
FIELDS: tuple[tuple[str, str, Mapping[str, Any] | None], ...] = (
    ("recipe", "fp8_recipe", RECIPES),
    ("amax_compute_algo", "fp8_amax_compute_algo", ALGOS),
    ("fp4", "fp4", None),
    ("fp4_recipe", "fp4_recipe", FP4_RECIPES),
    ("moe_token_dispatcher", "moe_token_dispatcher_type", None),
    ("moe_dispatch_fwd_dtype", "moe_dispatch_fwd_dtype", None),
    ("moe_combine_bwd_dtype", "moe_combine_bwd_dtype", None),
    ("moe_flex_backend", "moe_flex_dispatcher_backend", None),
    ("transformer_impl", "transformer_impl", None),
    ("inference_graph_scope", "inference_cuda_graph_scope", None),
    *((model, cfg, None) for model, cfg in INT_FIELDS.items()),
    *((model, cfg, None) for model, cfg in BOOL_FIELDS.items()),
    *((model, cfg, None) for model, cfg in TRAINING_STRINGS.items()),
)
STRINGS = (
    ("quantizer_factory", "fp8_quantizer_factory"),
    ("fp4_quantizer_factory", "fp4_quantizer_factory"),
    ("recompute_granularity", "recompute_granularity"),
    ("recompute_modules", "recompute_modules"),
)
# fields whose `None` default is a value, "off" (FP4 without `--fp4-format`), in a surface
# that has the FP4 fields at all
OFF_BY_NONE = frozenset({"fp4"})
# Megatron `--swiglu`, NeMo `activation: swiglu`, `gated_linear_unit`: the first that says
# gated wins
GATED_KEYS = ("gated_linear_unit", "swiglu", "activation", "activation_func")


def build_site(
    fields: dict[str, Arg],
    profile: Profile,
    path: str,
    site_span: Span,
    *,
    enabled: Setting[bool] | None = None,
    fmt: Setting[Fp8Format] | None = None,
    notes: list[SourceNote] | None = None,
    switch: Arg | None = None,
    checked: surfaces.Checked | None = None,
) -> Fp8Site:
    """An `Fp8Site` from TransformerConfig-named fields; missing fields take the defaults.
    `switch` is an on/off flag above the fields (NeMo-RL's `fp8_cfg.enabled`): written off,
    it makes the block dormant whatever `fp8` says; unreadable, FP8 is unknown.

    Written values are validated against the profile's surface model (`checked`, when the
    recognizer has already done so); a rejected value is an FP8401 note and an unknown
    setting."""
    if checked is None:
        checked = surfaces.check(profile.surface, fields)
    if enabled is None or fmt is None:
        enabled, fmt = _format(fields.get("fp8"), checked, profile)
    enabled = _switched(enabled, switch)
    anchor = (enabled.span if enabled.written else None) or site_span
    values: dict[str, Setting[Any]] = {"enabled": enabled, "fmt": fmt}
    _fields(values, fields, checked, profile, anchor)
    for model_name, cfg_name in STRINGS:
        arg = fields.get(cfg_name)
        if arg is not None and (arg.value is not None or not arg.known):
            values[model_name] = written(arg, _text(arg.value))
    _fsdp(values, fields, checked, profile, anchor)
    _gated(values, fields, profile, anchor)
    _virtual_pipeline(values, fields, checked, profile, anchor)
    _cuda_graph(values, fields, checked, profile, anchor)
    _derived(values, profile)
    _amax(values, profile, anchor)
    return Fp8Site.model_construct(
        path=path,
        framework=profile.framework,
        kind=profile.kind,
        span=site_span,
        enable_span=enabled.span if enabled.written else None,
        notes=list(notes or []),
        invalid=list(checked.invalid),
        edit=profile.edit,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _format(
    arg: Arg | None, checked: surfaces.Checked, profile: Profile
) -> tuple[Setting[bool], Setting[Fp8Format]]:
    """FP8 on or off, and the format, from Megatron's `fp8` (a format, or null for off)."""
    unknown = Setting[Fp8Format].model_construct(known=False)
    if arg is None:
        off = Setting[bool].model_construct(
            value=False,
            known=True,
            provenance="default",
            key=profile.key("fp8"),
            default_of=profile.label,
        )
        return off, unknown
    if not arg.known:
        return written(arg, None), written(arg, None)
    if "fp8" not in checked.values:  # rejected by the surface
        return written(arg, True), surfaces.rejected(arg)
    value = checked.values["fp8"]
    if value in (None, False, ""):  # `if self.fp8:` is false for each (`__post_init__`)
        return written(arg, False), unknown
    return written(arg, True), written(arg, FORMATS[value])


def _text(value: Any) -> str | None:
    """A string field's value; a list (`--recompute-modules core_attn moe_act`) as its words."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return " ".join(str(item) for item in value)
    return str(value)


def _fsdp(
    values: dict[str, Setting[Any]],
    fields: dict[str, Arg],
    checked: surfaces.Checked,
    profile: Profile,
    anchor: Span,
) -> None:
    """FSDP on if either implementation's switch is; off only if both are known off."""
    written_on: Setting[Any] | None = None
    unknown: Setting[Any] | None = None
    for name in FSDP_FLAGS:
        arg = fields.get(name)
        if arg is None:
            continue
        setting = surfaces.setting_of(arg, checked, name)
        if setting.value is True:
            written_on = written_on or setting
        elif not setting.known:
            unknown = unknown or setting
    if written_on is not None or unknown is not None:
        values["fsdp"] = written_on or cast("Setting[Any]", unknown)
    elif any(name in fields for name in FSDP_FLAGS):
        arg = next(fields[name] for name in FSDP_FLAGS if name in fields)
        values["fsdp"] = written(arg, False)
    elif all(name in profile.defaults for name in FSDP_FLAGS):
        values["fsdp"] = default(False, profile.label, profile.key(FSDP_FLAGS[0]), anchor)


def _switched(enabled: Setting[bool], switch: Arg | None) -> Setting[bool]:
    if switch is None or enabled.value is False:
        return enabled
    on = as_bool(switch.value) if switch.known else None
    return enabled if on is True else written(switch, on)


def _fields(
    values: dict[str, Setting[Any]],
    fields: dict[str, Arg],
    checked: surfaces.Checked,
    profile: Profile,
    anchor: Span,
) -> None:
    """The recipe, the amax algorithm, the integers and the booleans (`FIELDS`)."""
    for model_name, cfg_name, choices in FIELDS:
        if cfg_name in profile.ignored:
            continue  # reported as a note by the reader; the framework's own value stands
        arg = fields.get(cfg_name)
        convert = choices.__getitem__ if choices is not None else None
        if arg is None and cfg_name in profile.defaults:
            value = profile.defaults[cfg_name]
            shown = convert(value) if convert is not None else value
            values[model_name] = default(shown, profile.label, profile.key(cfg_name), anchor)
        elif arg is None and cfg_name in OFF_BY_NONE and "fp4_recipe" in profile.defaults:
            values[model_name] = default(None, profile.label, profile.key(cfg_name), anchor)
        elif arg is None and choices is None:
            continue  # no default: the site leaves it unset
        elif arg is not None and arg.known and checked.values.get(cfg_name, 0) is None:
            if cfg_name in OFF_BY_NONE:  # `fp4: null` is FP4 off, as written
                values[model_name] = written(arg, None)
            continue  # `ffn_hidden_size: null` means "derive it"
        elif arg is not None and cfg_name in OFF_BY_NONE and checked.values.get(cfg_name) == "":
            values[model_name] = written(arg, None)  # `fp4: ""` is off too (`if self.fp4:`)
        else:
            values[model_name] = surfaces.setting_of(arg, checked, cfg_name, convert=convert)


def _gated(
    values: dict[str, Setting[Any]], fields: dict[str, Arg], profile: Profile, anchor: Span
) -> None:
    for cfg_name in GATED_KEYS:
        arg = fields.get(cfg_name)
        if arg is None or not arg.known:
            continue
        if cfg_name in ("activation", "activation_func"):
            if isinstance(arg.value, str):
                values["gated_mlp"] = written(arg, arg.value.lower() in GATED_ACTIVATIONS)
        else:
            flag = as_bool(arg.value)
            if flag is not None:
                values["gated_mlp"] = written(arg, flag)
        if "gated_mlp" in values and values["gated_mlp"].value:
            return
    if "gated_mlp" not in values and "gated_linear_unit" in profile.defaults:
        gated = profile.defaults["gated_linear_unit"]
        values["gated_mlp"] = default(
            gated, profile.label, profile.key("gated_linear_unit"), anchor
        )


def _derived(values: dict[str, Setting[Any]], profile: Profile) -> None:
    """The FFN size from the hidden size, and expert TP from TP, where not written."""
    hidden = values.get("hidden_size")
    if "ffn_hidden_size" not in values and hidden is not None and hidden.value:
        gated = bool(values.get("gated_mlp") and values["gated_mlp"].value)
        ffn = int((4 * hidden.value * 2 / 3) / 64) * 64 if gated else 4 * hidden.value
        how = "(8/3 x hidden, rounded down to 64, for a gated MLP)" if gated else "(4 x hidden)"
        values["ffn_hidden_size"] = Setting[int].model_construct(
            value=ffn,
            known=True,
            provenance="derived",
            key=profile.key("ffn_hidden_size"),
            span=hidden.span,
            note=f"{profile.label} derives it from the hidden size {how}",
        )
    if "expert_tensor_parallel" not in values and "tensor_parallel" in values:
        tp = values["tensor_parallel"]
        values["expert_tensor_parallel"] = tp.model_copy(
            update={"provenance": "derived", "note": "expert TP defaults to TP"}
        )


def _amax(values: dict[str, Setting[Any]], profile: Profile, anchor: Span) -> None:
    """Megatron's amax reduction group, and TE's `reduce_amax` it never overrides."""
    tp_only = values.get("tp_only_amax_red")
    scope = AmaxScope.TP_CP if (tp_only is not None and tp_only.value) else AmaxScope.TP_DP_CP
    values["amax_scope"] = Setting[AmaxScope].model_construct(
        value=scope,
        known=tp_only is None or tp_only.known,
        provenance="default",
        default_of=profile.label,
        key="get_amax_reduction_group",
        span=(tp_only.span if tp_only is not None and tp_only.written else anchor),
        note="Megatron reduces amax over its amax-reduction group (TP x DP x CP, or TP x CP "
        "with `tp_only_amax_red`)",
    )
    if "reduce_amax" not in values:
        values["reduce_amax"] = default(
            True,
            profile.label,
            "reduce_amax",
            anchor,
            "Megatron never passes reduce_amax, so TE's True applies",
        )


def _virtual_pipeline(
    values: dict[str, Setting[Any]],
    fields: dict[str, Arg],
    checked: surfaces.Checked,
    profile: Profile,
    anchor: Span,
) -> None:
    """Virtual pipeline stages per pipeline rank (1: no interleaving).  Megatron takes the
    count (`--num-virtual-stages-per-pipeline-rank`, or the TransformerConfig field), or
    derives it from `--num-layers-per-virtual-pipeline-stage` as layers / PP / that number,
    and turns 1 into None (Megatron-LM@d98e8a64 `megatron/training/arguments.py` L950-979)."""
    for name in VIRTUAL_KEYS:
        arg = fields.get(name)
        if arg is not None:
            if arg.known and checked.values.get(name, 0) is None:
                values["virtual_pipeline"] = written(arg, 1)
            else:
                values["virtual_pipeline"] = surfaces.setting_of(arg, checked, name)
            return
    arg = fields.get(VP_LAYERS_KEY)
    if arg is not None:
        per = surfaces.setting_of(arg, checked, VP_LAYERS_KEY)
        layers, pp = values.get("num_layers"), values.get("pipeline_parallel")
        count: int | None = None
        if per.known and per.value and layers is not None and layers.known and layers.value:
            stages = pp.value if pp is not None and pp.known and pp.value else None
            if stages:
                count = max(1, int(layers.value) // (int(stages) * int(per.value)))
        values["virtual_pipeline"] = written(arg, count) if per.known else per
        if per.known and count is None:
            values["virtual_pipeline"] = Setting[int].model_construct(
                known=False, key=arg.key, span=arg.span, provenance="written"
            )
        return
    if "optimizer" in profile.defaults:  # the command line's defaults: both flags None
        values["virtual_pipeline"] = default(1, profile.label, profile.key(VIRTUAL_KEYS[1]), anchor)


def _cuda_graph(
    values: dict[str, Setting[Any]],
    fields: dict[str, Arg],
    checked: surfaces.Checked,
    profile: Profile,
    anchor: Span,
) -> None:
    """CUDA graphs on: `cuda_graph_impl` other than "none", or the deprecated
    `--enable-cuda-graph` / `--external-cuda-graph` (Megatron-LM@d98e8a64
    `megatron/core/transformer/transformer_config.py` L1049, L1075;
    `megatron/training/arguments.py` L611-630)."""
    for name in GRAPH_SWITCHES:
        arg = fields.get(name)
        if arg is not None:
            setting = surfaces.setting_of(arg, checked, name)
            if setting.value is True or not setting.known:
                values["cuda_graph"] = setting
                return
    arg = fields.get("cuda_graph_impl")
    if arg is not None:
        impl = surfaces.setting_of(arg, checked, "cuda_graph_impl")
        on = None if not impl.known else str(impl.value).lower() not in ("none", "")
        values["cuda_graph"] = written(arg, on) if impl.known else impl
    elif "cuda_graph_impl" in profile.defaults:
        off = profile.defaults["cuda_graph_impl"] in (None, "none")
        values["cuda_graph"] = default(
            not off, profile.label, profile.key("cuda_graph_impl"), anchor
        )
