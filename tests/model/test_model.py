"""The model's records: the sources build them without validation (`model_construct`), so
these tests check that validation would accept them unchanged, and that linting an FP8 YAML
file builds no pydantic schema."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from fp8lint.documents import kind_for
from fp8lint.documents.text import ParseError, SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Site, Setting
from fp8lint.rules import all_rules

from ..conftest import CORPUS, ROOT


def _texts() -> Iterator[tuple[str, str]]:
    for rule in all_rules():
        for ex in (*rule.valid, *rule.invalid):
            yield ex.filename, ex.text
    for top in (ROOT / "examples", CORPUS):
        if top.is_dir():
            for p in sorted(top.rglob("*")):
                if p.is_file() and kind_for(p.name):
                    yield str(p), p.read_text(encoding="utf-8", errors="replace")


def test_sites_are_what_strict_validation_accepts() -> None:
    checked = 0
    for name, text in _texts():
        kind = kind_for(name)
        assert kind is not None
        try:
            sites = parse_file(SourceFile(name, text), kind)
        except ParseError:
            continue
        for site in sites:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a mistyped value warns when dumped
                again = Fp8Site.model_validate(site.model_dump(), strict=True)
            assert again == site, name
            checked += 1
    assert checked > 50


def test_validation_still_coerces_outside_input() -> None:
    assert Setting[int].model_validate({"value": "3"}).value == 3
    site = Fp8Site.model_validate_json(
        '{"path": "a.yaml", "framework": "te", "kind": "k", "recipe": {"value": "delayed"},'
        ' "span": {"path": "a.yaml", "line": 1, "column": 1, "end_line": 1, "end_column": 2}}'
    )
    assert site.is_delayed and site.margin.value is None


PROBE = """
import sys
from fp8lint.cli import main
main(["check", *sys.argv[1:]])
from pydantic import BaseModel
import fp8lint.model as m
todo = [BaseModel]
built = []
while todo:
    for sub in todo.pop().__subclasses__():
        todo.append(sub)
        if sub.__module__ == m.__name__ and sub.__pydantic_complete__:
            built.append(sub.__name__)
print("BUILT=" + ",".join(sorted(built)))
# the one validator a lint builds: the surface of the family present (frameworks.surfaces)
print("SURFACES=" + ",".join(sorted(
    n.split(".")[2] for n in sys.modules
    if n.startswith("fp8lint.frameworks.") and n.endswith(".surface")
)))
"""


def test_linting_fp8_yaml_builds_only_its_family_surface(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 0\n  --fp8-amax-history-len: x\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    lines = r.stdout.strip().splitlines()[-2:]
    assert lines == ["BUILT=", "SURFACES=megatron"], r.stdout + r.stderr


def test_the_fast_span_builder_makes_the_same_spans_as_pydantic() -> None:
    from fp8lint.model import Span, make_span

    made = make_span("a.yaml", 1, 2, 3, 4, 5, 6)
    validated = Span.model_validate(
        {
            "path": "a.yaml",
            "line": 1,
            "column": 2,
            "end_line": 3,
            "end_column": 4,
            "start_offset": 5,
            "end_offset": 6,
        }
    )
    assert make_span.__name__ == "fast"  # the check at import accepted this pydantic
    assert made == validated and hash(made) == hash(validated)
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_dump() == validated.model_dump()
    assert pickle.loads(pickle.dumps(made)) == made
    assert made.model_copy(update={"line": 9}).line == 9 and made.line == 1
    with pytest.raises(ValidationError):
        made.line = 3  # frozen like any other Span
