"""torchao float8 training read from Python: `convert_to_float8_training`, its `config` (the
recipe) and its `module_filter_fn` (which linears stay in high precision).

`convert_to_float8_training(module, *, module_filter_fn=None, config=None)` swaps every
`nn.Linear` the filter accepts (all of them without one) for `Float8Linear`; `config=None`
is `Float8LinearConfig()`, whose cast configs are dynamic tensorwise (E4M3 forward, E5M2
gradients).  `Float8LinearConfig.from_recipe_name` names the other recipes.  Names and
values: torchao `torchao/float8/config.py`
and `float8_linear_utils.py`; the recipe and filter reading is `shared.torchao_recipes`
(Accelerate's `AORecipeKwargs` reads them the same way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared.torchao_recipes import (
    TORCHAO,
    implied_format,
    mentions_moe,
    read_filter,
    read_recipe,
)
from fp8lint.model import Fp8Site, Framework, Setting, SourceNote

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context, Target

CONVERT = "convert_to_float8_training"


def imported_from_torchao(module: str) -> bool:
    """Whether a bare `convert_to_float8_training` imported from `module` is torchao's."""
    return TORCHAO in module


def site(ctx: Context, tgt: Target) -> Fp8Site:
    """One `convert_to_float8_training(...)` call: the recipe, the format it implies, and
    whether the output head (and, in an MoE model, the router) is converted."""
    from fp8lint.frameworks.shared.python_args import call_args

    call = tgt.call
    call_span = ctx.span(call)
    args = call_args(call)
    keyed = {a.keyword: a for a in args if a.keyword is not None}
    splat = next((a for a in args if a.star == "**"), None)
    invalid: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {
        "enabled": Setting[bool].model_construct(
            value=True, known=True, provenance="derived", key=CONVERT, span=call_span
        ),
    }
    recipe = read_recipe(ctx, call_span, keyed.get("config"), splat, invalid)
    values["recipe"] = recipe
    fmt = implied_format(recipe)
    if fmt is not None:
        values["fmt"] = fmt
    head, router = read_filter(ctx, call_span, keyed.get("module_filter_fn"), splat)
    values["output_head_fp8"] = head
    if mentions_moe(ctx):
        values["router_fp8"] = router
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TORCHAO,
        kind=f"torchao {CONVERT}(...)",
        span=call_span,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )
