"""MyTrainer configs: delayed scaling with the keys of `precision:`."""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import AmaxAlgo, Fp8Format, Fp8Site, Recipe, Setting

FIELDS = {"enabled": "fp8", "margin": "margin", "amax_history_len": "history"}


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    pair = root.get("precision") if root is not None and root.is_map else None
    if pair is None or not pair[1].is_map or "fp8" not in pair[1].deref().keys():
        return []
    section = pair[1].deref()
    args = args_of_map(file, root, ("precision",), section, "precision.{key}")
    checked = surfaces.check("mytrainer", args)
    defaults = surfaces.defaults("mytrainer")
    span = file.span(pair[0].start, pair[1].end)
    values: dict[str, Setting[Any]] = {}
    for model_name, key in FIELDS.items():
        values[model_name] = surfaces.setting_of(
            args.get(key),
            checked,
            key,
            missing=lambda key=key: default(defaults[key], "MyTrainer", f"precision.{key}", span),
        )
    values["amax_compute_algo"] = surfaces.setting_of(
        args.get("algo"),
        checked,
        "algo",
        convert=AmaxAlgo,
        missing=lambda: default(AmaxAlgo(defaults["algo"]), "MyTrainer", "precision.algo", span),
    )
    values["recipe"] = default(Recipe.DELAYED, "MyTrainer", "precision.fp8", span)
    values["fmt"] = default(Fp8Format.HYBRID, "MyTrainer", "precision.fp8", span)
    keys = {"margin": "margin", "amax_history_len": "history", "amax_compute_algo": "algo"}
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework="mytrainer",
            kind="MyTrainer precision",
            span=span,
            invalid=checked.invalid,
            edit=edit_info(file, doc, section, keys),
            **cast("dict[str, Any]", values),
        )
    ]
