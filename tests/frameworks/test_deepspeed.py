"""DeepSpeed JSON with an MS-AMP section."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Framework, Recipe


def sites(text: str, name: str = "x.yaml"):  # type: ignore[no-untyped-def]
    file = SourceFile(name, text)
    return parse_file(file, "json" if name.endswith(".json") else "yaml")


def test_deepspeed_msamp_section() -> None:
    (site,) = sites(
        '{"train_batch_size": 8, "msamp": {"enabled": true, "opt_level": "O4"}}', "ds.json"
    )
    assert site.framework == Framework.DEEPSPEED_MSAMP
    assert site.is_on and site.recipe.value is Recipe.MSAMP
    assert [n.kind for n in site.invalid] == ["invalid-value"]
