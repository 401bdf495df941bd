"""NeMo AutoModel YAML recipes: the torchao `fp8:` section and the TE `te_fp8:` backend.

`fp8: {enabled, recipe_name, enable_fsdp_float8_all_gather,
precompute_float8_dynamic_scale_for_fsdp, force_recompute_fp8_weight_in_bwd, filter_fqns,
emulate}` is AutoModel's `FP8Config`; `apply_fp8_to_model` does nothing unless `enabled` is
true (default false), builds torchao's tensorwise `Float8LinearConfig` when `recipe_name` is
absent or `tensorwise` (only then are the FSDP and recompute switches passed on) and
`Float8LinearConfig.from_recipe_name` otherwise, and converts every `nn.Linear` whose name
contains none of `filter_fqns` (default `[]`, so the `lm_head` is converted unless listed).
Source: NVIDIA-NeMo/Automodel `nemo_automodel/components/quantization/fp8.py` @36044ad.

`te_fp8: {recipe: current|block|mxfp8}` under a model's `backend:` is `TEFp8Config`: present
means on, `current` (the default) is TE's `Float8CurrentScaling`, `block` is
`Float8BlockScaling`, `mxfp8` is `MXFP8BlockScaling`
(`nemo_automodel/components/models/common/utils.py` @36044ad).
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node, walk
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, invalid_note, note, written
from fp8lint.frameworks.shared.torchao_recipes import RECIPES, implied_format
from fp8lint.frameworks.shared.transformer_config import as_bool
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe, Setting, SourceNote

LABEL = "NeMo AutoModel"
# the fields of AutoModel's FP8Config
FP8_KEYS = frozenset(
    {
        "enabled",
        "recipe_name",
        "enable_fsdp_float8_all_gather",
        "precompute_float8_dynamic_scale_for_fsdp",
        "force_recompute_fp8_weight_in_bwd",
        "filter_fqns",
        "emulate",
    }
)
# switches AutoModel passes to torchao only on its manual tensorwise path
TENSORWISE_ONLY = (
    "enable_fsdp_float8_all_gather",
    "precompute_float8_dynamic_scale_for_fsdp",
    "force_recompute_fp8_weight_in_bwd",
)
TE_RECIPES = {
    "current": (Recipe.TENSORWISE, Fp8Format.HYBRID, "Float8CurrentScaling"),
    "block": (Recipe.BLOCKWISE, Fp8Format.E4M3, "Float8BlockScaling"),
    "mxfp8": (Recipe.MXFP8, Fp8Format.E4M3, "MXFP8BlockScaling"),
}
HEAD_FQNS = ("lm_head", "output")
KEYS = {"recipe": "recipe_name"}


def is_automodel(root: Node) -> bool:
    """A recipe whose `fp8:` is AutoModel's FP8Config mapping (not LLaMA-Factory's `fp8: true`)."""
    pair = root.get("fp8")
    if pair is None or not pair[1].is_map:
        return False
    keys = set(pair[1].deref().keys())
    if not keys or not keys <= FP8_KEYS:
        return False
    return bool(keys - {"enabled"}) or _mentions_automodel(root)


def _mentions_automodel(root: Node) -> bool:
    for _, mapping in walk(root, max_depth=4):
        target = mapping.get("_target_")
        if target is not None and "nemo_automodel" in str(target[1].deref().value):
            return True
    return False


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    sites: list[Fp8Site] = []
    if is_automodel(root):
        sites.append(_torchao_site(file, doc, root))
    sites.extend(_te_sites(file, root))
    return sites


def _fqns(file: SourceFile, pair: tuple[Node, Node] | None) -> tuple[list[str] | None, Arg | None]:
    """`filter_fqns: [...]` as strings and an Arg for its spans (None when absent or null)."""
    if pair is None:
        return None, None
    key, value = pair
    node = value.deref()
    span = file.span(key.start, value.end)
    if node.kind == "scalar" and node.value is None:
        return None, None
    if node.kind != "seq":
        arg = Arg("fp8.filter_fqns", node.value, span, file.span_of(value), raw=node.raw)
        return [], arg
    names = [str(x.deref().value) for x in node.value if x.deref().kind == "scalar"]
    arg = Arg("fp8.filter_fqns", names, span, file.span_of(value), raw=str(names))
    return names, arg


def _torchao_site(file: SourceFile, doc: Document, root: Node) -> Fp8Site:
    pair = root.get("fp8")
    assert pair is not None
    section = pair[1].deref()
    span = file.span(pair[0].start, pair[1].end)
    args = args_of_map(file, root, ("fp8",), section, "fp8.{key}")
    invalid: list[SourceNote] = []
    notes: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {}

    # the values the surface types (the tensorwise-only switches are only read for a note)
    checked = surfaces.check(
        "automodel", {k: args[k] for k in ("enabled", "recipe_name") if k in args}
    )
    invalid.extend(checked.invalid)
    en = args.get("enabled")
    values["enabled"] = (
        written(en, None)  # a rejected switch shows as written, value None (as it always has)
        if en is not None and en.known and not checked.ok("enabled")
        else surfaces.setting_of(
            en,
            checked,
            "enabled",
            missing=lambda: default(
                surfaces.defaults("automodel")["enabled"],
                LABEL,
                "fp8.enabled",
                file.span_of(pair[0]),
            ),
        )
    )
    anchor = values["enabled"].span or span

    name = args.get("recipe_name")
    recipe_name: str | None = None
    if name is None or (name.known and name.value is None):
        recipe_name = "tensorwise"
        values["recipe"] = default(
            Recipe.TENSORWISE,
            LABEL,
            "fp8.recipe_name",
            anchor,
            "no recipe_name: AutoModel builds torchao's tensorwise Float8LinearConfig",
        )
    else:
        recipe_name = checked.values.get("recipe_name")
        values["recipe"] = surfaces.setting_of(name, checked, "recipe_name", convert=RECIPES.get)
    if recipe_name is not None:
        fmt = implied_format(values["recipe"], "fp8.recipe_name")
        if fmt is not None:
            values["fmt"] = fmt
        if recipe_name != "tensorwise":
            for key in TENSORWISE_ONLY:
                arg = args.get(key)
                if arg is not None and arg.known and as_bool(arg.value):
                    notes.append(
                        note(
                            "ignored",
                            arg,
                            f"`{arg.key}` is read only with the tensorwise recipe; AutoModel "
                            f"builds the {recipe_name} config from its name and drops it",
                        )
                    )

    names, fqns = _fqns(file, section.get("filter_fqns"))
    if fqns is None:
        values["output_head_fp8"] = default(
            True, LABEL, "fp8.filter_fqns", anchor, "filter_fqns defaults to [] (nothing filtered)"
        )
    elif names is None or not isinstance(fqns.value, list):
        invalid.append(invalid_note(fqns, "expected a list of module names"))
    else:
        head = not any(f and any(f in h for h in HEAD_FQNS) for f in names)
        values["output_head_fp8"] = written(fqns, head, f"filter_fqns = {names}")
    return Fp8Site.model_construct(
        path=file.path,
        framework=Framework.TORCHAO,
        kind="NeMo AutoModel fp8 section (torchao)",
        span=span,
        enable_span=values["enabled"].span if values["enabled"].written else None,
        notes=notes,
        invalid=invalid,
        edit=edit_info(file, doc, section, KEYS, after_fp8=False),
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _te_sites(file: SourceFile, root: Node) -> list[Fp8Site]:
    """Each `te_fp8:` mapping in a `backend:` section: TE with a current/block/MXFP8 recipe."""
    sites: list[Fp8Site] = []
    for path, mapping in walk(root, max_depth=6):
        if not path or path[-1] != "backend":
            continue
        pair = mapping.get("te_fp8")
        if pair is None or not pair[1].is_map:
            continue  # absent, or `te_fp8: null` (TEFp8Config absent: off)
        prefix = ".".join((*path, "te_fp8"))
        span = file.span(pair[0].start, pair[1].end)
        key_span = file.span_of(pair[0])
        enabled = Setting[bool].model_construct(
            value=True,
            known=True,
            provenance="derived",
            key=prefix,
            span=key_span,
            note="a te_fp8 section turns TE FP8 on",
        )
        args = args_of_map(file, root, (*path, "te_fp8"), pair[1].deref(), prefix + ".{key}")
        invalid: list[SourceNote] = []
        recipe: Setting[Any]
        fmt: Setting[Any] = Setting[Fp8Format].model_construct(known=False)
        arg = args.get("recipe")
        if arg is None and pair[1].deref().get("recipe") is None:
            name = surfaces.defaults("automodel")["te_fp8_recipe"]
            rec, form, cls = TE_RECIPES[name]
            recipe = default(rec, LABEL, prefix + ".recipe", key_span, f"default `{name}`: {cls}")
            fmt = default(form, "Transformer Engine", prefix + ".recipe", key_span)
        elif arg is None or not arg.known:
            recipe = Setting[Recipe].model_construct(
                known=False, key=prefix + ".recipe", note="a TE recipe object fp8lint does not read"
            )
        else:
            checked = surfaces.check("automodel", {"te_fp8_recipe": arg})
            invalid.extend(checked.invalid)
            if checked.ok("te_fp8_recipe"):
                rec, form, cls = TE_RECIPES[checked.values["te_fp8_recipe"]]
                recipe = written(arg, rec, f"TE {cls}")
                fmt = default(form, "Transformer Engine", arg.key, arg.value_span, f"{cls} default")
            else:
                recipe = surfaces.rejected(arg)
        # `backend.experts` (`BackendConfig.experts`, `components/models/common/utils.py:335`
        # @36044ad3d): `torch_mm_mxfp8` runs the MoE grouped GEMMs in torchao MXFP8
        experts = args_of_map(file, root, path, mapping, ".".join((*path, "{key}"))).get("experts")
        extra: dict[str, Setting[Any]] = {}
        if experts is not None and experts.known and isinstance(experts.value, str):
            extra["expert_backend"] = written(experts, experts.value)
        sites.append(
            Fp8Site.model_construct(
                path=file.path,
                framework=Framework.TE,
                kind="NeMo AutoModel te_fp8 backend",
                span=span,
                enable_span=key_span,
                enabled=enabled,
                recipe=recipe,
                fmt=fmt,
                invalid=invalid,
                **cast("dict[str, Any]", extra),
            )
        )
    return sites
