"""Transformer Engine debug-tool configs (nvidia-dlframework-inspect feature YAMLs): which
layers and GEMMs run in what precision.

A config is a mapping of named sections; each has `enabled`, a `layers:` selector
(`layer_types`, `layer_numbers`, `layer_name_regex_pattern`) and, under the
`transformer_engine` namespace, features with their own `enabled` and a choice of GEMMs
(`gemms` / `gemms_struct`, each `fprop`, `dgrad`, `wgrad`) and tensors (`tensors` /
`tensors_struct`).  What each feature does to precision (NVIDIA/TransformerEngine
`transformer_engine/debug/features/*.py` @d0067d0d):

- `DisableFP8GEMM`, `DisableQuantizationGEMM`: the chosen GEMMs run in high precision.
- `DisableFP8Layer`, `DisableQuantizationLayer`: every GEMM of the layer runs in high precision.
- `PerTensorScaling`: the chosen tensors are cast with per-tensor current scaling (only inside
  a `DelayedScaling` autocast).
- `FakeQuant`: FP8 GEMM off; the chosen tensors are quantized to `quant_format` and back, and
  the GEMM runs in high precision.
- `LogFp8TensorStats`, `LogTensorStats`, `LogNvfp4TensorStats`, `DumpTensors`: logging only.

The file does not turn FP8 on or pick a recipe; the site records the section's `enabled`
and the overrides (`Fp8Site.precision_overrides`), so no recipe rule reads it.
"""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared.base import written
from fp8lint.frameworks.shared.transformer_config import as_bool
from fp8lint.frameworks.shared.tree_args import args_of_map
from fp8lint.model import Fp8Site, Framework, PrecisionOverride, Setting, SourceNote

NAMESPACE = "transformer_engine"
HIGH = "high precision"
PRECISION = {
    "DisableFP8GEMM": HIGH,
    "DisableQuantizationGEMM": HIGH,
    "DisableFP8Layer": HIGH,
    "DisableQuantizationLayer": HIGH,
    "PerTensorScaling": "FP8 with per-tensor current scaling",
    "FakeQuant": "high precision, inputs fake-quantized",
}
WHOLE_LAYER = frozenset({"DisableFP8Layer", "DisableQuantizationLayer"})
LOGGING = frozenset({"LogFp8TensorStats", "LogTensorStats", "LogNvfp4TensorStats", "DumpTensors"})
SELECTORS = ("layer_types", "layer_numbers", "layer_name_regex_pattern")


def _is_section(node: Node) -> bool:
    node = node.deref()
    if not node.is_map:
        return False
    ns = node.get(NAMESPACE)
    return ns is not None and ns[1].is_map and node.get("layers") is not None


def is_debug_config(doc: Document) -> bool:
    """Whether the document is an nvdlfw_inspect feature config: its FP8-named keys (a
    `LogFp8TensorStats` section, say) belong to TE's debug tool even when no section changes a
    precision, so they are not keys of an unknown family."""
    root = doc.root
    return root is not None and root.is_map and any(_is_section(v) for _k, v in root.items())


def _words(node: Node | None) -> tuple[str, ...]:
    """A scalar or a list of scalars, as text."""
    if node is None:
        return ()
    node = node.deref()
    if node.kind == "seq":
        return tuple(str(x.deref().raw) for x in node.value if x.deref().kind == "scalar")
    if node.kind == "scalar" and node.value is not None:
        return (str(node.raw),)
    return ()


def _selector(layers: Node) -> str:
    layers = layers.deref()
    if not layers.is_map:
        return "every layer"
    parts = []
    for key in SELECTORS:
        pair = layers.get(key)
        if pair is not None:
            parts.append(f"{key}: [{', '.join(_words(pair[1]))}]")
    return "; ".join(parts) or "every layer"


def _choices(feature: Node) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(gemms, tensors) groups: `gemms` + `tensors`, or one group per `gemms_struct` item."""
    feature = feature.deref()
    struct = feature.get("gemms_struct")
    if struct is not None and struct[1].deref().kind == "seq":
        groups = []
        for item in struct[1].deref().value:
            item = item.deref()
            if not item.is_map:
                continue
            pair = item.get("gemm")
            gemm = _words(pair[1] if pair else None)
            tensors = _tensors(item)
            groups.append((gemm, tensors))
        return groups
    gemms = feature.get("gemms")
    return [(_words(gemms[1]) if gemms else (), _tensors(feature))]


def _tensors(node: Node) -> tuple[str, ...]:
    plain = node.get("tensors")
    if plain is not None:
        return _words(plain[1])
    struct = node.get("tensors_struct")
    if struct is None or struct[1].deref().kind != "seq":
        return ()
    out: list[str] = []
    for item in struct[1].deref().value:
        item = item.deref()
        tensor = item.get("tensor") if item.is_map else None
        if tensor is not None:
            out.extend(_words(tensor[1]))
    return tuple(out)


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    sites: list[Fp8Site] = []
    for key, section in root.items():
        if key.raw is None or not _is_section(section):
            continue
        node = section.deref()
        layers = node.get("layers")
        ns = node.get(NAMESPACE)
        assert layers is not None and ns is not None
        selector = _selector(layers[1])
        overrides: list[PrecisionOverride] = []
        notes: list[SourceNote] = []
        for fkey, feature in ns[1].deref().items():
            name = str(fkey.raw)
            if name in LOGGING or not feature.is_map:
                continue
            span = file.span(fkey.start, feature.end)
            if name not in PRECISION:
                notes.append(
                    SourceNote.model_construct(
                        kind="unknown-feature",
                        key=f"{key.raw}.{NAMESPACE}.{name}",
                        span=span,
                        message=f"`{name}` is not a TE debug feature fp8lint knows",
                    )
                )
                continue
            on_pair = feature.deref().get("enabled")
            on = as_bool(on_pair[1].deref().value) if on_pair is not None else None
            fmt = feature.deref().get("quant_format")
            precision = PRECISION[name]
            if fmt is not None:
                precision += f" ({fmt[1].deref().raw})"
            groups = [((), ())] if name in WHOLE_LAYER else _choices(feature)
            overrides.extend(
                PrecisionOverride.model_construct(
                    feature=name,
                    layers=selector,
                    gemms=gemms,
                    tensors=tensors,
                    precision=precision,
                    enabled=on,
                    span=span,
                )
                for gemms, tensors in groups
            )
        if not overrides:
            continue
        prefix = str(key.raw)
        args = args_of_map(file, root, (prefix,), node, prefix + ".{key}", interpolate=False)
        en = args.get("enabled")
        if en is None:
            enabled = Setting[bool].model_construct(
                known=False, key=prefix + ".enabled", note="the section has no `enabled` key"
            )
        else:
            enabled = written(en, as_bool(en.value) if en.known else None)
        sites.append(
            Fp8Site.model_construct(
                path=file.path,
                framework=Framework.TE,
                kind=f"TE debug-tool config `{prefix}`",
                span=file.span(key.start, section.end),
                enable_span=enabled.span,
                enabled=enabled,
                notes=notes,
                precision_overrides=overrides,
            )
        )
    return sites


# ----------------------------------------------------- Megatron `--te-precision-config-file`
#
# `configs:` names TE recipes (`transformer_engine_config_type: TEQuantizationParams`, a
# `training_recipe` and an optional `evaluation_recipe`, each a `TEQuantizationRecipe`:
# `fp8_quantization_recipe` tensorwise|blockwise|mxfp8|custom, `fp4_quantization_recipe`
# nvfp4|custom, `fp8_format`, `custom_recipe_factory`, `override_quantized_autocast`,
# `override_nonquantized_autocast`, `tp_only_amax_red`, `fp8_param`, `fp4_param`; an empty
# recipe is BF16); `matchers:` are ordered glob patterns on module names that pick a config.
# Megatron rejects `delayed`, FP8 and FP4 together, a custom recipe without a factory and
# unknown keys (NVIDIA/Megatron-LM `megatron/core/extensions/transformer_engine.py`,
# `TransformerEngineMixedPrecision.md` @d98e8a64).

RECIPE_KEYS = frozenset(
    {
        "fp8_quantization_recipe",
        "fp4_quantization_recipe",
        "custom_recipe_factory",
        "fp8_format",
        "override_quantized_autocast",
        "override_nonquantized_autocast",
        "tp_only_amax_red",
        "fp8_param",
        "fp4_param",
    }
)
FP8_RECIPES = ("tensorwise", "blockwise", "mxfp8", "custom")
FP4_RECIPES = ("nvfp4", "custom")


def _invalid(file: SourceFile, key: str, node: Node, message: str) -> SourceNote:
    return SourceNote.model_construct(
        kind="invalid-value", key=key, span=file.span_of(node), message=message
    )


def _recipe_text(file: SourceFile, where: str, node: Node | None, invalid: list[SourceNote]) -> str:
    """What one `TEQuantizationRecipe` mapping runs in, checking it as Megatron does."""
    if node is None or not node.deref().is_map:
        return "?"
    node = node.deref()
    values = {str(k.raw): v.deref() for k, v in node.items() if k.raw is not None}
    for name, value in values.items():
        if name not in RECIPE_KEYS:
            invalid.append(
                _invalid(
                    file,
                    f"{where}.{name}",
                    value,
                    f"`{name}` is not a field of Megatron's TEQuantizationRecipe; Megatron raises",
                )
            )
    fp8, fp4 = values.get("fp8_quantization_recipe"), values.get("fp4_quantization_recipe")
    if fp8 is not None and fp4 is not None:
        invalid.append(
            _invalid(
                file,
                f"{where}.fp4_quantization_recipe",
                fp4,
                "FP8 and FP4 recipes are mutually exclusive; Megatron raises",
            )
        )
    if fp8 is not None:
        name = str(fp8.value)
        if name not in FP8_RECIPES:
            why = (
                "delayed scaling is not allowed in a per-module precision config"
                if name == "delayed"
                else "expected " + ", ".join(FP8_RECIPES)
            )
            invalid.append(
                _invalid(
                    file,
                    f"{where}.fp8_quantization_recipe",
                    fp8,
                    f"`fp8_quantization_recipe` is {name}; {why}",
                )
            )
        fmt = values.get("fp8_format")
        return f"FP8 {name} ({fmt.raw if fmt is not None else 'e4m3'})"
    if fp4 is not None:
        name = str(fp4.value)
        if name not in FP4_RECIPES:
            invalid.append(
                _invalid(
                    file,
                    f"{where}.fp4_quantization_recipe",
                    fp4,
                    f"`fp4_quantization_recipe` is {name}; expected nvfp4 or custom",
                )
            )
        return f"FP4 {name}"
    return "high precision (BF16)"


def from_precision_config(file: SourceFile, doc: Document) -> list[Fp8Site]:
    """A `--te-precision-config-file`: each enabled matcher, in order, as a precision override."""
    root = doc.root
    if root is None or not root.is_map:
        return []
    configs, matchers = root.get("configs"), root.get("matchers")
    if configs is None or matchers is None or not configs[1].is_map or not matchers[1].is_map:
        return []
    named = {str(k.raw): v.deref() for k, v in configs[1].deref().items() if v.is_map}
    if not any(v.get("transformer_engine_config_type") for v in named.values()):
        return []
    invalid: list[SourceNote] = []
    texts: dict[str, str] = {}
    for name, cfg in named.items():
        where = f"configs.{name}"
        text = _recipe_text(
            file, where + ".training_recipe", _value(cfg, "training_recipe"), invalid
        )
        evaluation = _value(cfg, "evaluation_recipe")
        if evaluation is not None:
            text += "; evaluation: " + _recipe_text(
                file, where + ".evaluation_recipe", evaluation, invalid
            )
        texts[name] = text
    overrides: list[PrecisionOverride] = []
    for key, matcher in matchers[1].deref().items():
        m = matcher.deref()
        if key.raw is None or not m.is_map:
            continue
        kind, pattern = _value(m, "type"), _value(m, "pattern")
        config, on = _value(m, "config"), _value(m, "enabled")
        name = str(config.value) if config is not None else ""
        if name not in texts:
            node = config if config is not None else m
            invalid.append(
                _invalid(
                    file,
                    f"matchers.{key.raw}.config",
                    node,
                    f"matcher `{key.raw}` names no config in `configs`",
                )
            )
        overrides.append(
            PrecisionOverride.model_construct(
                feature=str(key.raw),
                layers=f"{kind.raw if kind else 'glob'}: {pattern.raw if pattern else '?'}",
                precision=texts.get(name, "?"),
                enabled=as_bool(on.value) if on is not None else None,
                span=file.span(key.start, matcher.end),
            )
        )
    enabled = Setting[bool].model_construct(
        value=True,
        known=True,
        provenance="derived",
        key="matchers",
        span=file.span_of(matchers[0]),
        note="applies when the run passes it as --te-precision-config-file",
    )
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.MEGATRON,
            kind="Megatron TE precision config (--te-precision-config-file)",
            span=file.span_of(root),
            enabled=enabled,
            invalid=invalid,
            precision_overrides=overrides,
        )
    ]


def _value(node: Node, key: str) -> Node | None:
    pair = node.get(key)
    return pair[1].deref() if pair is not None else None
