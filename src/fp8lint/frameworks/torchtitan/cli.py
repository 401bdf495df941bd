"""torchtitan launches that switch a converter on from the command line:
`./run_train.sh --model.converters="quantize.linear.float8" --quantize.linear.float8.recipe_name
rowwise` (pytorch/torchtitan `docs/float8.md` @8a2686c4a), over the TOML job config that
`CONFIG_FILE=` or `--job.config_file` names.

The site holds what the flags write; everything else is the job config's, which this reader
does not merge, so it is unknown (never torchtitan's defaults).  The converter names and their
sections are those of the TOML reader (`toml.py`); TOML-era models name the head `output`.
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.shared.base import written
from fp8lint.frameworks.shared.shell_args import dashed_flags
from fp8lint.frameworks.shared.torchao_recipes import RECIPES
from fp8lint.frameworks.torchtitan.toml import DENSE_FLOAT8, DENSE_MX, filtered
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe, Setting

_CONFIG_NOTE = "the job config (not merged here) may set it"


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """None unless the command passes `--model.converters`."""
    if not any(w.text.startswith("--model.converters") for w in command):
        return None
    flags, _ = dashed_flags(file, command)
    conv = flags.get("--model.converters")
    if conv is None or not conv.known:
        return []
    names = [n.strip() for n in str(conv.value).strip("[]").replace('"', "").split(",")]
    dense = [DENSE_FLOAT8[n] for n in names if n in DENSE_FLOAT8]
    mx = [DENSE_MX[n] for n in names if n in DENSE_MX]
    if not dense and not mx:
        return []
    section = ".".join((mx or dense)[0])
    values: dict[str, Setting[Any]] = {"enabled": written(conv, True)}
    recipe = flags.get(f"--{section}.recipe_name")
    if mx:
        values["recipe"] = written(conv, Recipe.MXFP8)
        values["fmt"] = written(conv, Fp8Format.E4M3, "MXFP8 uses E4M3")
    elif recipe is not None and recipe.known and str(recipe.value) in RECIPES:
        values["recipe"] = written(recipe, RECIPES[str(recipe.value)])
    else:
        values["recipe"] = _unknown(f"{section}.recipe_name")
    filters = flags.get(f"--{section}.filter_fqns")
    if filters is not None and filters.known:
        listed = [f.strip() for f in str(filters.value).split(",") if f.strip()]
        values["output_head_fp8"] = written(filters, not filtered(listed, "output"))
    else:
        values["output_head_fp8"] = _unknown(f"{section}.filter_fqns")
    span = file.span_of_indices(command[0].start, command[-1].end)
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.TORCHAO,
            kind="torchtitan launch (`--model.converters`)",
            span=span,
            enable_span=conv.span,
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )
    ]


def _unknown(key: str) -> Setting[Any]:
    return Setting[Any].model_construct(known=False, key=key, note=_CONFIG_NOTE)
