"""Command-line families beyond Megatron's own flags and Hydra programs, read from the same
parsed shell script (`documents.shell`): each family's descriptor names the command readers
that claim the commands it owns (`Family.commands`) and the readers of what is not a command
at all (`Family.scripts`: variables a sourced config script exports, NVIDIA's MLPerf
`config_*.sh`).  `launch` asks these first, and leaves a claimed command alone.

The words of a command become `Arg`s in `shared.shell_args`.
"""

from __future__ import annotations

from collections.abc import Sequence

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import Reader, SourceFile
from fp8lint.frameworks import registry
from fp8lint.model import Fp8Site


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """The sites of `command` when a family owns it (the first that claims it), else None."""
    for family, read in registry.command_readers():
        found: list[Fp8Site] | None = read(file, command, script)
        if found is not None:
            return registry.attributed(family, found)
    return None


def from_script(
    file: SourceFile, script: Script, sites: Sequence[Fp8Site], reader: Reader | None = None
) -> list[Fp8Site]:
    """Sites made of a script's variables rather than of one command."""
    out: list[Fp8Site] = []
    for family, read in registry.script_readers():
        out.extend(registry.attributed(family, read(file, script, [*sites, *out], reader)))
    return out
