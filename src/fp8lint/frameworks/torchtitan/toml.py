"""torchtitan TOML configs (torchao float8 / MX converters).

`[model] converters = ["float8"]` swaps `nn.Linear` for torchao's `Float8Linear`
(`[quantize.linear.float8]`; before 2025-09 the section was `[float8]`, and in late 2024 it
was switched on by `[float8] enable_float8_linear = true`).  `["mx"]` uses MXFP8
(`[quantize.linear.mx]`).  torchtitan skips every module whose name contains one of
`filter_fqns`; the float8 default is an empty list, so the output head (`output`) and an MoE
router (`...router.gate`) are converted unless listed.  The MX default filter is
`["output"]`; the late-2024 converter skipped the output layer itself.  torchao scaling is
dynamic: `tensorwise` (the default recipe, E4M3 forward and E5M2 gradients) or `rowwise`.
Sources: pytorch/torchtitan `torchtitan/config/job_config.py` @238fa99, `components/
quantization/float8.py`.
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.toml import TomlDoc
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.torchao_recipes import RECIPES
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe, Setting, SourceNote, Span

LABEL = "torchtitan"
MOE_MODELS = ("llama4", "deepseek_v3", "qwen3_moe", "gpt_oss")
ROUTER_FQN = "layers.0.moe.router.gate"


def filtered(filters: list[str], fqn: str) -> bool:
    """torchtitan's module filter: an entry that is a substring of the module's name."""
    return any(isinstance(f, str) and f and f in fqn for f in filters)


# torchtitan renamed the output head `output` -> `lm_head` in 786e26f8e (2026-04-27), two
# months after its Python config registries replaced TOML (9810191bb, 2026-02-23), and its
# own registries' `filter_fqns = ["output"]` became `["lm_head"]` only in b3cf840ce (#4008,
# 2026-07-29): in a registry, a filter that names one of the two keeps the head out of FP8 on
# one side of the rename only, and which side a run is on is the installed torchtitan's
HEAD_RENAME = (
    "the head is `lm_head` since torchtitan 786e26f8e (2026-04) and `output` before; "
    "which this run has depends on the installed torchtitan"
)


def head_in_fp8(filters: list[str]) -> tuple[bool | None, str | None]:
    """Whether `filter_fqns` leaves the output head in FP8: True when it names neither
    spelling, False when it names both, None (with why) when it names one of them."""
    names = [fqn for fqn in ("lm_head", "output") if filtered(filters, fqn)]
    if not names:
        return True, None
    if len(names) == 2:
        return False, "the list names the output head (`lm_head` and `output`)"
    return None, f"the list names `{names[0]}` only: {HEAD_RENAME}"


# converter names (`[model] converters`, each reading the section of its name): "float8" and
# "mx" until 2025-09; "quantize.dense.float8|mx" and "quantize.moe.float8|mx" from 5b5d46856
# (2025-09-26); "quantize.linear.float8|mx" and "quantize.grouped_mm.float8|mx" from
# 8a2686c4a (2025-09-30) until TOML configs gave way to Python registries (9810191bb,
# 2026-02-23), each registered by `register_model_converter` in
# `torchtitan/components/quantization/{float8,mx}.py`
DENSE_FLOAT8 = {
    "float8": ("quantize", "linear", "float8"),
    "quantize.linear.float8": ("quantize", "linear", "float8"),
    "quantize.dense.float8": ("quantize", "dense", "float8"),
}
DENSE_MX = {
    "mx": ("quantize", "linear", "mx"),
    "quantize.linear.mx": ("quantize", "linear", "mx"),
    "quantize.dense.mx": ("quantize", "dense", "mx"),
}
GROUPED = frozenset(
    {
        "quantize.grouped_mm.float8",
        "quantize.grouped_mm.mx",
        "quantize.moe.float8",
        "quantize.moe.mx",
    }
)


class _Settings:
    def __init__(self, file: SourceFile, doc: TomlDoc) -> None:
        self.file, self.doc = file, doc

    def span(self, path: tuple[str, ...]) -> Span | None:
        loc = self.doc.where.get(path)
        if loc is None:
            return None
        return self.file.span_of_indices(loc.value_start, loc.value_end)

    def entry(self, path: tuple[str, ...]) -> Span | None:
        loc = self.doc.where.get(path)
        if loc is None:
            return None
        return self.file.span_of_indices(loc.key_start, loc.value_end)

    def written(self, path: tuple[str, ...], value: Any, note: str | None = None) -> Setting[Any]:
        return Setting[Any].model_construct(
            value=value,
            known=True,
            provenance="written",
            span=self.span(path),
            entry=self.entry(path),
            key=".".join(path),
            note=note,
        )

    def default(self, value: Any, key: str, span: Span | None, note: str) -> Setting[Any]:
        return Setting[Any].model_construct(
            value=value,
            known=True,
            provenance="default",
            span=span,
            key=key,
            default_of=LABEL,
            note=note,
        )


def _section_args(
    file: SourceFile, s: _Settings, section_path: tuple[str, ...], section: Any
) -> dict[str, Arg]:
    """The section's entries as `Arg`s, with the spans the TOML scanner recorded."""
    args: dict[str, Arg] = {}
    for key, value in section.items() if isinstance(section, dict) else ():
        if key == "converter_recipe_name":
            continue  # the surface's name for the Python converter's `recipe_name`
        path = (*section_path, key)
        value_span, entry = s.span(path), s.entry(path)
        if value_span is not None and entry is not None:
            args[key] = Arg(".".join(path), value, entry, value_span)
    return args


def _grouped_site(file: SourceFile, s: _Settings, names: list[str]) -> Fp8Site:
    """Converters of the MoE experts' grouped GEMMs only: the dense linears (the output head
    and the router gate among them) stay in high precision."""
    path = ("model", "converters")
    mx = any(n.endswith(".mx") for n in names)
    anchor = s.span(path) or file.span_of_indices(0, 0)
    values: dict[str, Setting[Any]] = {
        "enabled": s.written(path, True, f"{names}: the experts' grouped GEMMs only"),
        "recipe": s.written(path, Recipe.MXFP8)
        if mx
        else Setting[Any].model_construct(
            known=False, key=".".join(path), note="torchao's grouped-GEMM float8 recipe"
        ),
        "output_head_fp8": s.default(False, "model.converters", anchor, "dense linears untouched"),
        "router_fp8": s.default(False, "model.converters", anchor, "dense linears untouched"),
    }
    return Fp8Site.model_construct(
        path=file.path,
        framework=Framework.TORCHAO,
        kind="torchtitan TOML (grouped-GEMM converter)",
        span=anchor,
        enable_span=values["enabled"].span,
        **cast("dict[str, Any]", values),
    )


def from_toml(file: SourceFile, doc: TomlDoc) -> list[Fp8Site]:
    converters = doc.get("model", "converters")
    old = doc.get("float8")
    new = doc.get("quantize", "linear", "float8")
    mx = doc.get("quantize", "linear", "mx")
    dense_sec = doc.get("quantize", "dense", "float8")
    if converters is None and old is None and new is None and mx is None and dense_sec is None:
        return []
    s = _Settings(file, doc)
    conv = [c for c in converters if isinstance(c, str)] if isinstance(converters, list) else []
    values: dict[str, Setting[Any]] = {}
    invalid: list[SourceNote] = []
    use_mx = any(c in DENSE_MX for c in conv)
    dense = [DENSE_FLOAT8[c] for c in conv if c in DENSE_FLOAT8]
    grouped = [c for c in conv if c in GROUPED]
    unknown = [c for c in conv if c not in DENSE_FLOAT8 and c not in DENSE_MX and c not in GROUPED]
    legacy_on = isinstance(old, dict) and old.get("enable_float8_linear") is True
    if dense or use_mx:
        values["enabled"] = s.written(("model", "converters"), True)
    elif grouped:
        return [_grouped_site(file, s, grouped)]
    elif any(w in c.lower() for c in unknown for w in ("float8", "fp8", "mx")):
        values["enabled"] = s.written(
            ("model", "converters"), True, f"converter {unknown} is not one fp8lint knows"
        ).model_copy(update={"value": None, "known": False})
    elif legacy_on:
        values["enabled"] = s.written(("float8", "enable_float8_linear"), True)
    else:
        where = ("model", "converters") if converters is not None else None
        values["enabled"] = (
            s.written(where, False)
            if where
            else Setting[bool].model_construct(
                value=False,
                known=True,
                provenance="default",
                key="model.converters",
                default_of=LABEL,
            )
        )
    anchor = values["enabled"].span or file.span_of_indices(0, 0)

    section_path: tuple[str, ...]
    if use_mx:
        section_path = next(DENSE_MX[c] for c in conv if c in DENSE_MX)
    elif dense and dense[0] == ("quantize", "dense", "float8"):
        section_path = dense[0]  # the 2025-09 name reads `[quantize.dense.float8]`
    elif new is not None or old is None:
        section_path = ("quantize", "linear", "float8")
    else:
        section_path = ("float8",)
    section = doc.get(*section_path) or {}
    recipe_name = section.get("recipe_name") if isinstance(section, dict) else None
    # the float8 section's values, validated against torchtitan's surface (the MX converter's
    # section has names of its own)
    checked = surfaces.check(
        "torchtitan", {} if use_mx else _section_args(file, s, section_path, section)
    )
    invalid.extend(checked.invalid)
    if use_mx:
        values["recipe"] = s.written(("model", "converters"), Recipe.MXFP8)
        values["fmt"] = s.default(Fp8Format.E4M3, "recipe_name", anchor, "MXFP8 uses E4M3")
    elif recipe_name is None:
        values["recipe"] = s.default(
            Recipe.TENSORWISE,
            ".".join((*section_path, "recipe_name")),
            anchor,
            "torchao's default float8 recipe is tensorwise",
        )
        values["fmt"] = s.default(
            Fp8Format.HYBRID, "recipe_name", anchor, "tensorwise: E4M3 forward, E5M2 gradients"
        )
    elif "recipe_name" in checked.values:
        recipe = RECIPES[recipe_name]
        values["recipe"] = s.written((*section_path, "recipe_name"), recipe)
        fmt = Fp8Format.HYBRID if recipe is Recipe.TENSORWISE else Fp8Format.E4M3
        values["fmt"] = s.default(fmt, "recipe_name", anchor, f"{recipe_name} casts")

    # which modules are converted
    filters_path = (*section_path, "filter_fqns")
    filters = section.get("filter_fqns") if isinstance(section, dict) else None
    if isinstance(filters, list):  # TOML configs predate the `lm_head` rename: `output`
        out_fp8 = not filtered(filters, "output")
        values["output_head_fp8"] = s.written(filters_path, out_fp8, f"filter_fqns = {filters}")
    elif use_mx:
        values["output_head_fp8"] = s.default(
            False, "filter_fqns", anchor, 'the MX converter filters ["output"] by default'
        )
    elif section_path == ("float8",):
        values["output_head_fp8"] = s.default(
            False, "filter_fqns", anchor, "the late-2024 converter skipped `output` itself"
        )
    else:
        values["output_head_fp8"] = s.default(
            True, ".".join(filters_path), anchor, "filter_fqns defaults to [] (nothing filtered)"
        )
    name = doc.get("model", "name")
    flavor = str(doc.get("model", "flavor") or "")
    moe = (isinstance(name, str) and name in MOE_MODELS) or (flavor.endswith("e") and "x" in flavor)
    if moe:
        if isinstance(filters, list):
            values["router_fp8"] = s.written(
                filters_path, not filtered(filters, ROUTER_FQN), f"filter_fqns = {filters}"
            )
        else:
            values["router_fp8"] = s.default(
                not use_mx,
                ".".join(filters_path),
                anchor,
                "nothing filters the MoE router gate by default",
            )

    # topology and recompute
    par = "parallelism" if doc.has("parallelism") else "training"
    for field, key in (
        ("tensor_parallel", "tensor_parallel_degree"),
        ("pipeline_parallel", "pipeline_parallel_degree"),
        ("context_parallel", "context_parallel_degree"),
        ("expert_parallel", "expert_parallel_degree"),
    ):
        for table in (par, "experimental"):
            value = doc.get(table, key)
            if isinstance(value, int) and not isinstance(value, bool):
                values[field] = s.written((table, key), value)
                break
    mode = doc.get("activation_checkpoint", "mode")
    if isinstance(mode, str):
        values["recompute_granularity"] = s.written(
            ("activation_checkpoint", "mode"), None if mode == "none" else mode
        )
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.TORCHAO,
            kind="torchtitan TOML",
            span=anchor,
            enable_span=values["enabled"].span if values["enabled"].written else None,
            invalid=invalid,
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )
    ]
