"""ColossalAI Booster plugins constructed with `use_fp8=` in a training script.

With `use_fp8=True` the plugin's model wrapper hooks every trainable parameter's `F.linear`
and runs it through `colossalai.quantization.fp8.linear_fp8` (hpcaitech/ColossalAI @4f9953be,
`colossalai/quantization/fp8_hook.py`, `fp8.py` `_LinearFp8` and `cast_to_fp8`): inputs and
weights are cast to E4M3 and gradients to E5M2 with a per-tensor scale from each tensor's own
current amax, so the recipe is tensorwise current scaling with no history, no margin and no
amax reduction across ranks; a GEMM whose dimensions are not multiples of 16 stays in BF16.
Nothing of it can be configured, so the site holds the switch and those fixed facts, and no
fix writes anything.  `fp8_communication=` compresses collectives, not GEMMs: not a site.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default
from fp8lint.model import AmaxScope, Fp8Format, Fp8Site, Recipe, SourceNote

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context, Target

LABEL = "ColossalAI"
PLUGINS = frozenset(
    {"HybridParallelPlugin", "MoeHybridParallelPlugin", "GeminiPlugin", "LowLevelZeroPlugin"}
)
_HOW = "linear_fp8: E4M3 inputs and weights, E5M2 gradients, each scaled by its current amax"


def _colossal(module: str) -> bool:
    return "colossalai" in module


def sites(ctx: Context) -> list[Fp8Site]:
    """One site per plugin construction that passes `use_fp8=` (ColossalAI's, however
    imported)."""
    found: list[Fp8Site] = []
    names = set(PLUGINS) | {a for a, real in ctx.facts.aliases.items() if real in PLUGINS}
    for name in sorted(names):
        for call in ctx.facts.calls.get(name, ()):
            tgt = ctx.target(call, PLUGINS, PLUGINS, dict.fromkeys(PLUGINS, _colossal))
            if tgt is None:
                continue
            site = _site(ctx, tgt)
            if site is not None:
                found.append(site)
    return found


def _site(ctx: Context, tgt: Target) -> Fp8Site | None:
    call = tgt.call
    kw = ctx.keywords(call)
    val = kw.get("use_fp8")
    if val is None:
        return None
    span = ctx.span(call)
    checked = surfaces.check("colossalai", {"use_fp8": val.arg})
    if val.arg.known and not checked.ok("use_fp8"):
        enabled = ctx.unreadable(val.arg)
    else:
        enabled = surfaces.setting_of(val.arg, checked, "use_fp8")
    notes: list[SourceNote] = []
    precision = kw.get("precision")
    if enabled.value is True and precision is not None and precision.arg.known:
        if str(precision.arg.value).lower() in ("fp32", "float32"):
            notes.append(
                SourceNote.model_construct(
                    kind="conflict",
                    key=precision.arg.key,
                    span=precision.arg.span,
                    message='`use_fp8=True` with `precision="fp32"`: linear_fp8 asserts '
                    "fp16/bf16 inputs",
                    why="ColossalAI's FP8 linear casts from half precision only "
                    "(colossalai/quantization/fp8.py `_LinearFp8`)",
                )
            )
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework="colossalai",
        notes=notes,
        kind=f"ColossalAI {tgt.name}(use_fp8=...)",
        span=span,
        enable_span=enabled.span if enabled.written else None,
        enabled=enabled,
        invalid=list(checked.invalid),
        recipe=default(Recipe.TENSORWISE, LABEL, "use_fp8", span, _HOW),
        fmt=default(Fp8Format.HYBRID, LABEL, "use_fp8", span, _HOW),
        amax_scope=default(AmaxScope.LOCAL, LABEL, "use_fp8", span, "no amax reduction"),
    )
