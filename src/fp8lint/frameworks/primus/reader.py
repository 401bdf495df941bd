"""AMD Primus experiment configs: Megatron arguments written as YAML keys under
`modules.<name>.overrides` of a module whose `framework` is `megatron`.

Primus builds the Megatron argument namespace from the module config (`config:
pre_trainer.yaml`, which extends `trainer_base.yaml`), the model file (`model: ...yaml`) and
then the experiment's `overrides`, which win.  The keys are Megatron's argument names
(`fp8: hybrid`, `fp8_recipe`, `tensor_model_parallel_size`, ...).  The module and model files
ship inside Primus, not beside the experiment, so the values they give are written down
once, as Primus' defaults in `surface.py` (AMD-AGI/Primus @fd1eeabb):

- `primus/configs/modules/megatron/trainer_base.yaml`: `fp8: null` (off), `fp8_margin: 0`,
  `fp8_recipe: delayed`, `fp8_interval: 1`, `fp8_amax_history_len: 1024`,
  `fp8_amax_compute_algo: max`, `fp8_wgrad: true`, `fp8_param_gather: false`,
  `first_last_layers_bf16: false`, `num_layers_at_start_in_bf16: 1`,
  `num_layers_at_end_in_bf16: 1`, `fp4: null`.
- `primus/configs/models/megatron/language_model.yaml` (which the model files extend):
  tensor, pipeline, context and expert parallel sizes 1, `sequence_parallel: true`.

The MLP kind (`swiglu`) comes from the model file, which is not read: it stays unknown.
Values written as `${VAR:default}` are filled from the environment by Primus: unknown here.
A module with `framework: maxtext` is read with MaxText's keys (the `maxtext` family's
`config.site_from_args`, found through the registry).
"""

from __future__ import annotations

from dataclasses import replace

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.megatron_flags import fields_from_flags
from fp8lint.frameworks.shared.transformer_config import (
    MODEL_TO_CONFIG,
    Profile,
    SurfaceDefaults,
    build_site,
)
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import Fp8Site, Framework, Span

LABEL = "AMD Primus"
PRIMUS_DEFAULTS = SurfaceDefaults("primus")


def _maxtext_site(path: str, flags: dict[str, Arg], span: Span, kind: str) -> Fp8Site | None:
    """A `framework: maxtext` module: MaxText's own reader, found through the registry (a
    family does not import another)."""
    from fp8lint.frameworks.registry import family

    maxtext = family("maxtext")
    if maxtext is None:
        return None
    site: Fp8Site | None = maxtext.resolve(".config:site_from_args")(path, flags, span, kind)
    return site


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    modules = root.get("modules")
    if modules is None or not modules[1].is_map:
        return []
    sites: list[Fp8Site] = []
    for key, module in modules[1].deref().items():
        if key.raw is None or not module.is_map:
            continue
        framework = module.deref().get("framework")
        overrides = module.deref().get("overrides")
        kind = str(framework[1].deref().value).lower() if framework is not None else ""
        if kind not in ("megatron", "maxtext") or overrides is None or not overrides[1].is_map:
            continue
        prefix = f"modules.{key.raw}.overrides"
        written = args_of_map(
            file,
            root,
            ("modules", key.raw, "overrides"),
            overrides[1].deref(),
            prefix + ".{key}",
            interpolate=False,
        )
        flags: dict[str, Arg] = {}
        for name, arg in written.items():
            if isinstance(arg.value, str) and "${" in arg.value:
                arg = replace(arg, known=False, note=f"`{arg.value}` is filled in by Primus")
            flags[name] = arg
        span = file.span(key.start, module.end)
        if kind == "maxtext":
            site = _maxtext_site(
                file.path, flags, span, f"AMD Primus `{key.raw}` MaxText overrides"
            )
            sites.extend([site] if site is not None else [])
            continue
        profile = Profile(
            framework=Framework.MEGATRON,
            label=LABEL,
            defaults=PRIMUS_DEFAULTS,
            surface="primus",
            prefix=f"{prefix}.",
            kind=f"AMD Primus `{key.raw}` Megatron overrides",
            edit=edit_info(file, doc, overrides[1], MODEL_TO_CONFIG),
        )
        sites.append(build_site(fields_from_flags(flags), profile, file.path, span))
    return sites
