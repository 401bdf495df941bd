"""`fp8lint show`: the normalized model of each FP8 site, value by value, with where each
value came from (written, a framework default, a preset, derived)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from fp8lint.model import Fp8Site


def render_sites(path: str, sites: list[Fp8Site], label: Callable[[str], str] = str) -> str:
    """`label` names a site's framework (the registry's, handed down by the caller)."""
    from fp8lint.diagnostics import printable
    from fp8lint.model import SETTING_FIELDS

    if not sites:
        return f"{printable(path)}: no FP8 configuration site recognized\n"
    out: list[str] = []
    for i, site in enumerate(sites, 1):
        s = site.span
        out.append(f"{s.path}:{s.line}:{s.column}: site {i}: {site.kind} ({label(site.framework)})")
        out.append(f"    {'precision':28} {_precision(site)}")
        if len(site.layers) > 1:
            out.append(f"    layers (base first): {' > '.join(site.layers)}")
        for name in SETTING_FIELDS:
            setting = getattr(site, name)
            if not setting.known and setting.span is None and not setting.key:
                continue
            value = setting.value
            shown = getattr(value, "value", value) if setting.known else "unknown"
            if setting.provenance == "written" and setting.span is not None:
                sp = setting.span
                where = f"{sp.path}:" if sp.path != path else ""
                origin = f"written at {where}{sp.line}:{sp.column} `{setting.key}`"
            elif setting.provenance == "default":
                origin = f"default of {setting.default_of or 'the framework'}"
            elif setting.provenance == "preset":
                origin = f"preset `{setting.key}`"
            elif setting.provenance == "absent":
                origin = "not read"
            else:
                origin = "derived"
            extra = f" - {setting.note}" if setting.note else ""
            out.append(f"    {name:28} {shown!s:14} {origin}{extra}")
        for o in site.precision_overrides:
            what, tensors = ", ".join(o.gemms), ", ".join(o.tensors)
            if what and tensors:
                what = f"{what} ({tensors})"
            elif not what:
                what = tensors or "every GEMM"
            state = "" if o.enabled else " [disabled]"
            out.append(
                f"    precision {o.span.line}:{o.span.column} {o.feature}: {o.layers}: "
                f"{what} in {o.precision}{state}"
            )
        for n in site.notes + site.invalid:
            out.append(f"    note {n.span.line}:{n.span.column} [{n.kind}] {n.message}")
    # paths, keys, values and notes come from the input: each line is `printable`, so none of
    # them can start a line of its own or send a control sequence to the terminal
    return "".join(printable(line) + "\n" for line in out)


def _precision(site: Fp8Site) -> str:
    """What the site trains in: `FP8 mxfp8`, `FP4 nvfp4`, `off`, or `unknown`."""
    fp8 = site.enabled.value if site.enabled.known else None
    fp4 = site.fp4_on
    recipe = site.active_recipe
    named = recipe.value if recipe is not None else "unknown recipe"
    fp4_recipe = site.fp4_recipe  # an FP4 recipe the model has no Recipe for (MXFP4)
    if recipe is None and fp4 is True and fp4_recipe.known and isinstance(fp4_recipe.value, str):
        named = fp4_recipe.value
    if fp8 is True and site.recipe.value is not None and site.recipe.value.value == "nvfp4":
        return "FP4 nvfp4"
    if fp8 is True:
        return f"FP8 {named}" + (" and FP4 (both on)" if fp4 else "")
    if fp4 is True:
        return f"FP4 {named}" + (" (FP8 off)" if fp8 is False else "")
    return "off" if fp8 is False else "unknown"
