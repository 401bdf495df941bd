"""MS-AMP used directly from Python: `msamp.initialize(model, optimizer=None, opt_level='O1',
use_te=False)` (Azure/MS-AMP `msamp/__init__.py` @ 9746ea8).

`initialize` accepts only `'O1'` and `'O2'` (exact spelling; it raises `ValueError` otherwise):
FP8 GEMMs, FP8 weight gradients and communication in both, FP8 first Adam moment with FP16
second moment in O2.  `'O3'` (FP8 weights and ZeRO) exists only in the DeepSpeed integration
(`"msamp"` section of a DeepSpeed config, `deepspeed.py`).  MS-AMP scales per tensor with its
own scaling meta, not TE's delayed-scaling recipe, so the TE recipe rules do not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, written
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, SourceNote

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context

LABEL = "MS-AMP"


def _is_initialize(ctx: Context, call: cst.Call) -> bool:
    origin = ctx.imported_from(call.func)
    return origin == "msamp.initialize"


def sites(ctx: Context) -> list[Fp8Site]:
    names = {"initialize"} | {a for a, r in ctx.facts.aliases.items() if r == "initialize"}
    calls = [c for n in sorted(names) for c in ctx.facts.calls.get(n, ()) if _is_initialize(ctx, c)]
    return [site(ctx, c) for c in sorted(calls, key=ctx.doc.where)]


def site(ctx: Context, call: cst.Call) -> Fp8Site:
    from fp8lint.frameworks.shared.python_args import call_args, positional

    call_span = ctx.span(call)
    invalid: list[SourceNote] = []
    args = call_args(call)
    level = next((a for a in args if a.keyword == "opt_level"), None)
    plain = positional(call)
    if level is None and len(plain) > 2:
        level = plain[2]
    if level is None:
        dflt = surfaces.defaults("msamp")["opt_level"]
        level_setting = default(dflt, LABEL, "opt_level", call_span)
        note = f"no opt_level given: MS-AMP uses {dflt}"
        level_setting = level_setting.model_copy(update={"note": note})
    else:
        arg = ctx.value_of("opt_level", level.node, level.value).arg
        checked = surfaces.check("msamp", {"opt_level": arg})
        invalid.extend(checked.invalid)
        level_setting = surfaces.setting_of(arg, checked, "opt_level")
        if arg.known and not checked.ok("opt_level"):
            # rejected, yet kept as written: the recipe's note names the level MS-AMP refuses
            level_setting = written(arg, arg.value)
    recipe: Setting[Any] = Setting[Recipe].model_construct(
        value=Recipe.MSAMP,
        known=True,
        provenance="derived",
        key="msamp.initialize",
        span=ctx.span(call.func),
        note=f"MS-AMP opt_level {level_setting.value or 'unknown'}: its own per-tensor scaling",
    )
    enabled = Setting[bool].model_construct(
        value=True, known=True, provenance="derived", key="msamp.initialize", span=call_span
    )
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.DEEPSPEED_MSAMP,
        kind="MS-AMP msamp.initialize(...)",
        span=call_span,
        enabled=enabled,
        recipe=recipe,
        invalid=invalid,
    )
