"""The least a linter on fp8lint's stack does for one YAML config with interpolations.

    python bench/stack_floor.py [--adapter] FILE

Import PyYAML, OmegaConf and pydantic; compose FILE with libyaml; resolve one `${...}`
interpolation with OmegaConf; define one pydantic model of one field and validate the value
with it.  Any implementation that reads such a file with PyYAML, resolves it with OmegaConf
and holds what it read in a pydantic model pays at least this; `bench/run.py` times it beside
`fp8lint check FILE` and yamllint.

The model is a `BaseModel`, not a `TypeAdapter(int)` as before: defining any model imports
pydantic's field machinery (`pydantic.fields`, `pydantic.types`, `annotated_types`), which a
bare adapter of `int` never loads and a linter whose records are pydantic models cannot skip.
`--adapter` runs the old floor (a `TypeAdapter(int)`), which the bench times beside it.
Both exit as `fp8lint` does, their heap frozen first (`gc.freeze`): the interpreter's last
collections are a cost any linter can skip, so the floor does not count them.
"""

from __future__ import annotations

import sys


def main(path: str, adapter: bool = False) -> int:
    import yaml
    from omegaconf import OmegaConf

    with open(path, "rb") as fh:
        data = fh.read()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    yaml.compose(data, Loader=loader)
    resolved = OmegaConf.create({"a": 1, "b": "${a}"}).b
    if adapter:
        from pydantic import TypeAdapter

        return 0 if TypeAdapter(int).validate_python(resolved) == 1 else 1
    from pydantic import BaseModel

    class Value(BaseModel):
        value: int

    return 0 if Value.model_validate({"value": resolved}).value == 1 else 1


if __name__ == "__main__":
    code = main(sys.argv[-1], adapter="--adapter" in sys.argv[1:-1])
    import gc

    gc.freeze()  # the exit fp8lint's command makes (`cli.entry`): a linter can skip this cost
    sys.exit(code)
