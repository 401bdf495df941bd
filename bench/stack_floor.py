"""The least a linter on fp8lint's stack does for one YAML config with interpolations.

    python bench/stack_floor.py FILE

Import PyYAML, OmegaConf and pydantic; compose FILE with libyaml; resolve one `${...}`
interpolation with OmegaConf; build and run one pydantic validator.  Any implementation that
reads such a file with PyYAML, resolves it with OmegaConf and validates with pydantic pays at
least this; `bench/run.py` times it beside `fp8lint check FILE` and yamllint.
"""

from __future__ import annotations

import sys


def main(path: str) -> int:
    import yaml
    from omegaconf import OmegaConf
    from pydantic import TypeAdapter

    with open(path, "rb") as fh:
        data = fh.read()
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    yaml.compose(data, Loader=loader)
    resolved = OmegaConf.create({"a": 1, "b": "${a}"}).b
    return 0 if TypeAdapter(int).validate_python(resolved) == 1 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
