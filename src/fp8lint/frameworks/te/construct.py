"""What Transformer Engine's recipe classes refuse when they are built, beyond one keyword's
type: a `Format` written as a string, `Float8BlockScaling`'s GEMM options and its pairs of
2D block dimensions.  The one-keyword checks are the class models' (`shared/te_surface.py`);
this module hands a recipe call's keywords to them (`validated`) and reads what they cannot
(a call's value, a combination with a default).

A recipe is a pydantic dataclass (pydantic's lax mode coerces each keyword) whose
`__post_init__` asserts; every check here is one of those refusals, reported where the
deciding keyword's value is written: FP8401 (`site.invalid`) for a single value, FP8403
(`site.notes`, kind "conflict") for a combination.  Only a recipe call's own keywords count:
`r.x = value` after the call is not validated by pydantic and runs no `__post_init__`.  A
value fp8lint cannot read (a variable bound to no literal, an environment variable) leaves
its check silent, and so do TE's environment-variable defaults (`NVTE_BACKWARD_OVERRIDE`,
`NVTE_NVFP4_4OVER6`, ...), which are not read.  TE's checks are `assert`s (but for
`quantization_alignment`, a `ValueError`): under `python -O` they do not run.

The checks, by their line in TE 2.20's `transformer_engine/common/recipe/__init__.py`
(NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b), and the first release
tag in the mirror that has each (`stamped` gives each note its release, and the rules skip
the ones newer than the run's `transformer-engine` target):

- TE264, L315-316, L376-377, L464: pure E5M2 (`fp8_format=Format.E5M2`) refused by
  `DelayedScaling`, `Float8CurrentScaling` and `MXFP8BlockScaling` since before v2.0, by
  `Float8BlockScaling` since v2.9: FP8404's (the site's format).  `CustomRecipe` does not
  assert it (its factory picks the formats), so its site leaves the format unknown.
- TE265-270: `backward_override` in None, `"high_precision"`, `"dequantized"` (every class)
  and only None for `DelayedScaling`: since v2.15 (the keyword is new there).  FP8401.
- TE446-448: `Float8BlockScaling` block dimensions `x_`/`w_`/`grad_block_scaling_dim` in
  1 or 2: since v2.3 (the class is new there).  FP8401.
- TE449-457: no two of them 2 (x and w, x and grad, w and grad), the defaults being x=1,
  w=2, grad=1, so `x_block_scaling_dim=2` alone meets the 2D weights: since v2.3.  FP8403.
- TE458-460: `fp8_gemm_fprop`/`_dgrad`/`_wgrad` of `Float8BlockScaling` with
  `use_split_accumulator` false: since v2.3.  FP8401.
- TE461-463: `fp8_dpa` or `fp8_mha` true for `Float8BlockScaling`: since v2.4.  FP8401.
- TE577-578: `NVFP4BlockScaling` needs `fp4_format=Format.E2M1` and `fp8_format=Format.E4M3`
  (HYBRID or E5M2 is refused): since v2.8 (the class is new there).  FP8401.
- TE582-590: `nvfp4_4over6` and `nvfp4_4over6_e4m3_use_256` in `none`, `weights`,
  `activations`, `all`, and `nvfp4_4over6_err_mode` in `MAE`, `MSE`, compared as written
  (L566 upper-cases the environment variable's default only, not a keyword): since v2.17.
  FP8401.
- TE699-700: `CustomRecipe` `quantization_alignment` positive: not in v2.18 (commit
  bce8162f1, in 2.20).  `CustomRecipe` itself is since v2.9.  FP8401.
- pydantic: a string for `fp8_format` (or `fp4_format`) is not a `Format` member
  (`Format`'s values are namedtuples), so `DelayedScaling(fp8_format="HYBRID")` is refused
  by every release since the recipes became pydantic dataclasses (before v2.0).  FP8401.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared.base import Arg, invalid_note
from fp8lint.frameworks.shared.te_recipes import CHECKED, CONSTRUCTED
from fp8lint.model import SourceNote

if TYPE_CHECKING:
    from collections.abc import Callable

    from fp8lint.frameworks.shared import surfaces
    from fp8lint.frameworks.shared.python_args import Context, Target, Val

MEMBERS = ("E2M1", "E4M3", "E5M2", "HYBRID")
FORMAT_KEYS = ("fp8_format", "fp4_format")
GEMMS = ("fp8_gemm_fprop", "fp8_gemm_dgrad", "fp8_gemm_wgrad")
# Float8BlockScaling's block dimensions and their defaults (TE L435-437), in TE's order
BLOCK_DIMS: dict[str, int] = {
    "x_block_scaling_dim": 1,
    "w_block_scaling_dim": 2,
    "grad_block_scaling_dim": 1,
}
_2D_WHY = (
    "Float8BlockScaling asserts when it is built that no GEMM takes 2D blocks on both sides "
    "(x with w, x with grad, w with grad)"
)


# the TE release that brought each check (the list above): by the keyword that decides it,
# then by the class (a class newer than the target has none of its checks there)
_SINCE_KEY = {
    "backward_override": "2.15",
    "nvfp4_4over6": "2.17",
    "nvfp4_4over6_e4m3_use_256": "2.17",
    "nvfp4_4over6_err_mode": "2.17",
    "quantization_alignment": "2.20",
}
_SINCE_CLASS = {
    "Float8BlockScaling": "2.3",
    "NVFP4BlockScaling": "2.8",
    "CustomRecipe": "2.9",
}
_BLOCK_ATTENTION = ("fp8_dpa", "fp8_mha")  # refused by Float8BlockScaling since v2.4


def stamped(notes: list[SourceNote], cls: str) -> list[SourceNote]:
    """Each note with the TE release its check came with (`SourceNote.since`), for the rules
    to gate on `target-versions`."""
    from fp8lint.frameworks.shared.te_recipes import CHECKED

    out = []
    for note in notes:
        release = _SINCE_KEY.get(note.key)
        if release is None and cls == "Float8BlockScaling" and note.key in _BLOCK_ATTENTION:
            release = "2.4"
        if release is None and (note.kind == "conflict" or note.key not in CHECKED):
            release = _SINCE_CLASS.get(cls)  # a class's own check (not a shared keyword type)
        if release is not None:
            note = note.model_copy(update={"since": f"transformer-engine {release}"})
        out.append(note)
    return out


def format_string(arg: Arg) -> SourceNote | None:
    """A `Format` keyword written as a string: pydantic refuses it (an Enum of namedtuples
    takes a member, or its value, never a name)."""
    if not (arg.known and isinstance(arg.value, str)):
        return None
    name = arg.value.strip().upper()
    hint = f" (`Format.{name}`)" if name in MEMBERS else ""
    shown = arg.raw if arg.raw is not None else repr(arg.value)
    return SourceNote.model_construct(
        kind="invalid-value",
        key=arg.key,
        span=arg.value_span,
        message=f"`{arg.key}` is {shown}; expected a `Format` member{hint}, not a string",
    )


def split_accumulator(
    ctx: Context, val: Val, te_module: Callable[[str], bool]
) -> SourceNote | None:
    """`fp8_gemm_*=MMParams(use_split_accumulator=False)` (or a dict of it, which pydantic
    builds into one) on `Float8BlockScaling`, which asserts split accumulation; any other
    literal is not an `MMParams`.  None when fine or unreadable."""
    import libcst as cst

    from fp8lint.documents.python import last_name
    from fp8lint.frameworks.shared import surfaces
    from fp8lint.frameworks.shared.te_surface import MMParams

    arg, node = val.arg, val.node
    fields: dict[str, Arg] = {}
    if isinstance(node, cst.Call) and last_name(node.func) == "MMParams":
        origin = ctx.imported_from(node.func)
        if origin is None or not te_module(origin):
            return None  # an `MMParams` fp8lint cannot tell is TE's
        if any(a.star for a in node.args):
            return None
        for i, a in enumerate(node.args):
            key = a.keyword.value if a.keyword is not None else None
            if key is None and i == 0:
                key = "use_split_accumulator"
            if key == "use_split_accumulator":
                fields[key] = ctx.value_of(key, a, a.value).arg
    elif isinstance(node, cst.Dict):
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                return None
            ok, key = ctx.literal(element.key)
            if not ok or not isinstance(key, str):
                return None
            if key == "use_split_accumulator":
                fields[key] = ctx.value_of(key, element, element.value).arg
    elif arg.known:
        return invalid_note(arg, "expected an `MMParams`")
    else:
        return None
    field = fields.get("use_split_accumulator")
    if field is None:
        return None  # MMParams() splits by default
    if not field.known:
        return None
    checked = surfaces.check_model(MMParams, {"use_split_accumulator": field})
    if not checked.ok("use_split_accumulator"):
        return invalid_note(arg, "`use_split_accumulator` is not true or false")
    if checked.values["use_split_accumulator"]:
        return None
    return invalid_note(arg, "expected `use_split_accumulator=True`: Float8BlockScaling needs it")


def two_2d_blocks(
    own: dict[str, Val],
    values: dict[str, Any],
    defaults_apply: bool,
) -> SourceNote | None:
    """`Float8BlockScaling` with two of its block dimensions 2 (a written one with another
    written one or a default): one conflict, at the first written 2 in the call.

    `values` are the validated dimensions written in the call; an unwritten dimension is its
    default only when nothing else in the call (a positional argument, `**kwargs`) can set it."""
    dims: dict[str, int | None] = {}
    for key, default_dim in BLOCK_DIMS.items():
        if key in own:
            dims[key] = values.get(key)  # None: unreadable or refused (FP8401's)
        else:
            dims[key] = default_dim if defaults_apply else None
    twos = [key for key, dim in dims.items() if dim == 2]
    written_twos = [key for key in twos if key in own]
    if len(twos) < 2 or not written_twos:
        return None
    first = min(written_twos, key=lambda k: own[k].arg.value_span.start_offset)
    parts = [f"`{key}` 2" + ("" if key in own else " (TE's default)") for key in twos]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1]
    return SourceNote.model_construct(
        kind="conflict",
        key=first,
        span=own[first].arg.value_span,
        message=f"{listed}: Float8BlockScaling has no 2D-by-2D block GEMM",
        why=_2D_WHY,
    )


# ------------------------------------------------------------- what a recipe call hands over


def validated(
    ctx: Context,
    kw: dict[str, Val],
    allowed: frozenset[str],
    invalid: list[SourceNote],
    construction: bool,
) -> dict[str, Arg]:
    """The keywords of `kw` a recipe model validates as written (with those only
    construction checks, for a call's own keywords), a `Format` member by its name; a
    `Format` written as a string is refused here (into `invalid`)."""
    out = {
        key: val.arg
        for key, val in kw.items()
        if key in allowed
        and (key in CHECKED or key == "amax_compute_algo" or (construction and key in CONSTRUCTED))
    }
    for key in FORMAT_KEYS:
        val = kw.get(key)
        if val is None or key not in allowed:
            continue
        arg, member = format_arg(ctx, val)
        note = None if member else format_string(arg)
        if note is not None:
            invalid.append(note)
        else:
            out[key] = arg
    return out


def format_arg(ctx: Context, val: Val) -> tuple[Arg, bool]:
    """`Format.E4M3` (however `Format` is reached) as the member's name, and True; anything
    else as read, and False (a string as written; an expression fp8lint cannot read stays
    unknown)."""
    import libcst as cst

    from fp8lint.documents.python import dotted
    from fp8lint.frameworks.shared.python_args import is_member_of

    arg = val.arg
    node = val.node
    if dotted(node) is not None and (
        is_member_of(node, "Format")
        or (  # `F.E4M3` after `from transformer_engine.common.recipe import Format as F`
            isinstance(node, cst.Attribute)
            and any(q.endswith(".Format") for q in ctx.doc.imported_names(node.value))
        )
    ):
        member = val.node.attr.value  # type: ignore[attr-defined]
        return replace(arg, known=True, value=member, note=None), True
    return arg, False


def block_checks(
    ctx: Context,
    tgt: Target,
    own: dict[str, Val],
    built: surfaces.Checked,
    notes: list[SourceNote],
    te_module: Callable[[str], bool],
) -> list[SourceNote]:
    """`Float8BlockScaling`'s checks beyond one keyword's type: split accumulation in each
    GEMM (FP8401 notes, returned) and no two 2D block dimensions (a conflict, into
    `notes`)."""
    out = []
    for key in GEMMS:
        val = own.get(key)
        note = split_accumulator(ctx, val, te_module) if val else None
        if note is not None:
            out.append(note)
    # an unwritten dimension is TE's default unless a positional or `**` argument may set it
    others = [a for a in tgt.call.args if a.keyword is None and a.value is not tgt.callee]
    conflict = two_2d_blocks(own, built.values, defaults_apply=not others)
    if conflict is not None:
        notes.append(conflict)
    return out
