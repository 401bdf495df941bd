"""Megatron `TransformerConfig` semantics, shared by every stack built on it.

Megatron flags, Megatron `--yaml-cfg` files, NeMo 1.x YAML, NeMo 2 `MegatronMixedPrecision`,
Megatron-Bridge `MixedPrecisionConfig` and serialized NeMo 2 configs all name the same fields
(`fp8`, `fp8_recipe`, `fp8_amax_history_len`, ...).  They differ in defaults, which is the
point: a `Profile` holds one stack's defaults and how it spells a key, and `build_site`
turns the written fields into an `Fp8Site` where every missing field is that stack's default.

Sources: Megatron-LM `megatron/core/transformer/transformer_config.py` and
`megatron/core/fp8_utils.py`; NeMo `nemo/lightning/pytorch/plugins/mixed_precision.py`;
Megatron-Bridge `src/megatron/bridge/training/mixed_precision.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.frameworks.te import python as te
from fp8lint.model import (
    AmaxAlgo,
    AmaxScope,
    EditInfo,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

MEGATRON_DEFAULTS: dict[str, Any] = {
    "fp8_recipe": "delayed",
    "fp8_margin": 0,
    "fp8_interval": 1,
    "fp8_amax_history_len": 1,
    "fp8_amax_compute_algo": "most_recent",
    "fp8_wgrad": True,
    "fp8_output_proj": False,
    "fp8_dot_product_attention": False,
    "fp8_multi_head_attention": False,
    "tp_only_amax_red": False,
    "first_last_layers_bf16": False,
    "num_layers_at_start_in_bf16": 1,
    "num_layers_at_end_in_bf16": 1,
    "fp8_param_gather": False,
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "context_parallel_size": 1,
    "expert_model_parallel_size": 1,
    "sequence_parallel": False,
    "gated_linear_unit": False,
}


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(base)
    out.update(changes)
    return out


NEMO2_DEFAULTS = _with(
    MEGATRON_DEFAULTS, num_layers_at_start_in_bf16=0, num_layers_at_end_in_bf16=0
)
BRIDGE_DEFAULTS = _with(NEMO2_DEFAULTS, fp8_recipe="tensorwise")
# TE's DelayedScaling() defaults as TransformerConfig fields (what `--fp8-*` leaves to TE)
TE_DEFAULTS = {
    f"fp8_{key}": te.DELAYED_DEFAULTS[key]
    for key in ("margin", "amax_history_len", "amax_compute_algo")
}

RECIPES = {
    "delayed": Recipe.DELAYED,
    "tensorwise": Recipe.TENSORWISE,
    "mxfp8": Recipe.MXFP8,
    "blockwise": Recipe.BLOCKWISE,
    "custom": Recipe.CUSTOM,
}
FORMATS = {"e4m3": Fp8Format.E4M3, "hybrid": Fp8Format.HYBRID}
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
    "seq_length": "seq_length",
    "micro_batch_size": "micro_batch_size",
    "world_size": "world_size",
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
}
# model field -> TransformerConfig field, for fixes that write a key
MODEL_TO_CONFIG: dict[str, str] = {
    **INT_FIELDS,
    **BOOL_FIELDS,
    "fmt": "fp8",
    "recipe": "fp8_recipe",
    "amax_compute_algo": "fp8_amax_compute_algo",
}


@dataclass(frozen=True)
class Profile:
    """One stack's defaults and spelling."""

    framework: str  # the family whose semantics apply (`model.Framework`)
    label: str
    defaults: dict[str, Any]
    spell: Callable[[str], str] = lambda name: name
    kind: str = "TransformerConfig fields"
    edit: EditInfo | None = None
    # NeMo 1.x: keys the stack reads but does not forward on its default path
    ignored: dict[str, str] = field(default_factory=dict)

    @property
    def surface(self) -> str:
        """The family whose surface model (`frameworks.surfaces`) validates the fields."""
        return _SURFACES.get(self.framework, "megatron")


_SURFACES = {Framework.NEMO1: "nemo1", Framework.NEMO2: "nemo2", Framework.BRIDGE: "bridge"}


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


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
    invalid: list[SourceNote] = list(checked.invalid)
    good = checked.values
    site_notes = list(notes or [])
    values: dict[str, Setting[Any]] = {}

    def missing(name: str, value: Any, span: Span | None, note: str | None = None) -> Setting[Any]:
        return default(value, profile.label, profile.spell(name), span, note)

    # -- enabled and format ---------------------------------------------------------------
    if enabled is None or fmt is None:
        arg = fields.get("fp8")
        if arg is None:
            enabled = Setting[bool].model_construct(
                value=False,
                known=True,
                provenance="default",
                key=profile.spell("fp8"),
                default_of=profile.label,
            )
            fmt = Setting[Fp8Format].model_construct(known=False)
        elif not arg.known:
            enabled = written(arg, None)
            fmt = written(arg, None)
        elif "fp8" in good and good["fp8"] in (None, False):
            enabled = written(arg, False)
            fmt = Setting[Fp8Format].model_construct(known=False)
        elif "fp8" in good:
            enabled = written(arg, True)
            fmt = written(arg, FORMATS[good["fp8"]])
        else:  # rejected by the surface
            enabled = written(arg, True)
            fmt = Setting[Fp8Format].model_construct(
                known=False, span=arg.value_span, key=arg.key, provenance="written"
            )
    if switch is not None and enabled.value is not False:
        on = as_bool(switch.value) if switch.known else None
        if on is not True:
            enabled = written(switch, on)
    values["enabled"] = enabled
    values["fmt"] = fmt
    anchor = enabled.span if enabled.written else None
    anchor = anchor or site_span

    # -- recipe -------------------------------------------------------------------------
    arg = fields.get("fp8_recipe")
    if arg is None:
        values["recipe"] = missing("fp8_recipe", RECIPES[profile.defaults["fp8_recipe"]], anchor)
    elif not arg.known:
        values["recipe"] = written(arg, None)
    elif "fp8_recipe" in good:
        values["recipe"] = written(arg, RECIPES[good["fp8_recipe"]])
    else:
        values["recipe"] = Setting[Recipe].model_construct(
            known=False, span=arg.value_span, key=arg.key, provenance="written"
        )

    # -- amax algorithm -------------------------------------------------------------------
    arg = fields.get("fp8_amax_compute_algo")
    if arg is None:
        algo_default = profile.defaults.get("fp8_amax_compute_algo")
        values["amax_compute_algo"] = (
            missing("fp8_amax_compute_algo", ALGOS[algo_default], anchor)
            if algo_default
            else Setting[AmaxAlgo].model_construct(known=False)
        )
    elif not arg.known:
        values["amax_compute_algo"] = written(arg, None)
    elif "fp8_amax_compute_algo" in good:
        values["amax_compute_algo"] = written(arg, ALGOS[good["fp8_amax_compute_algo"]])
    else:
        values["amax_compute_algo"] = Setting[AmaxAlgo].model_construct(
            known=False, span=arg.value_span, key=arg.key, provenance="written"
        )

    # -- integers and booleans --------------------------------------------------------------
    for model_name, cfg_name in INT_FIELDS.items():
        arg = fields.get(cfg_name)
        if arg is None:
            if cfg_name in profile.defaults:
                values[model_name] = missing(cfg_name, profile.defaults[cfg_name], anchor)
            continue
        if not arg.known:
            values[model_name] = written(arg, None)
            continue
        if cfg_name in good and good[cfg_name] is None:
            continue  # `ffn_hidden_size: null` means "derive it"
        number = good.get(cfg_name)
        if number is None:
            values[model_name] = Setting[int].model_construct(
                known=False, span=arg.value_span, key=arg.key, provenance="written"
            )
        else:
            values[model_name] = written(arg, number)
    for model_name, cfg_name in BOOL_FIELDS.items():
        arg = fields.get(cfg_name)
        if cfg_name in profile.ignored:
            continue  # reported as a note below; the framework's own value stands
        if arg is None:
            if cfg_name in profile.defaults:
                values[model_name] = missing(cfg_name, profile.defaults[cfg_name], anchor)
            continue
        if not arg.known:
            values[model_name] = written(arg, None)
            continue
        if cfg_name in good and good[cfg_name] is None:
            continue
        flag = good.get(cfg_name)
        if flag is None:
            values[model_name] = Setting[bool].model_construct(
                known=False, span=arg.value_span, key=arg.key, provenance="written"
            )
        else:
            values[model_name] = written(arg, flag)

    # -- strings ---------------------------------------------------------------------------
    for model_name, cfg_name in (
        ("fp4", "fp4"),
        ("quantizer_factory", "fp8_quantizer_factory"),
        ("recompute_granularity", "recompute_granularity"),
    ):
        arg = fields.get(cfg_name)
        if arg is not None and (arg.value is not None or not arg.known):
            values[model_name] = written(arg, None if arg.value is None else str(arg.value))

    # -- gated MLP (Megatron `--swiglu`, NeMo `activation: swiglu`, `gated_linear_unit`) ----
    for cfg_name in ("gated_linear_unit", "swiglu", "activation", "activation_func"):
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
            break
    if "gated_mlp" not in values and "gated_linear_unit" in profile.defaults:
        values["gated_mlp"] = missing(
            "gated_linear_unit", profile.defaults["gated_linear_unit"], anchor
        )

    # -- derived values -----------------------------------------------------------------------
    hidden = values.get("hidden_size")
    if "ffn_hidden_size" not in values and hidden is not None and hidden.value:
        gated = bool(values.get("gated_mlp") and values["gated_mlp"].value)
        ffn = int((4 * hidden.value * 2 / 3) / 64) * 64 if gated else 4 * hidden.value
        values["ffn_hidden_size"] = Setting[int].model_construct(
            value=ffn,
            known=True,
            provenance="derived",
            key=profile.spell("ffn_hidden_size"),
            span=hidden.span,
            note=(
                f"{profile.label} derives it from the hidden size "
                + (
                    "(8/3 x hidden, rounded down to 64, for a gated MLP)"
                    if gated
                    else "(4 x hidden)"
                )
            ),
        )
    if "expert_tensor_parallel" not in values and "tensor_parallel" in values:
        tp = values["tensor_parallel"]
        values["expert_tensor_parallel"] = tp.model_copy(
            update={"provenance": "derived", "note": "expert TP defaults to TP"}
        )

    # -- amax reduction --------------------------------------------------------------------
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

    return Fp8Site.model_construct(
        path=path,
        framework=profile.framework,
        kind=profile.kind,
        span=site_span,
        enable_span=enabled.span if enabled.written else None,
        notes=site_notes,
        invalid=invalid,
        edit=profile.edit,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )
