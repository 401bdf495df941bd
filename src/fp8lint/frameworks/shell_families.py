"""Command-line families beyond Megatron's own flags and Hydra programs, read from the same
parsed shell script (`documents.shell`): each family module claims the commands it owns.

`from_command` is asked first for every command of a script; a family that recognizes the
command answers with its sites (possibly none), and `launch` then leaves the command alone.
`from_script` reads what is not a command at all: variables a sourced config script exports
(NVIDIA's MLPerf `config_*.sh`).

The words of a command become `Arg`s in `shell_args`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import Reader, SourceFile
from fp8lint.model import Fp8Site

CommandReader = Callable[[SourceFile, list[Word], Script], "list[Fp8Site] | None"]
ScriptReader = Callable[[SourceFile, Script, Sequence[Fp8Site], "Reader | None"], "list[Fp8Site]"]


def families() -> tuple[list[CommandReader], list[ScriptReader]]:
    """The family readers, in the order they are asked (the first that claims a command
    wins).  Imported here so that `launch` needs only this module."""
    from fp8lint.frameworks.bridge import cli as bridge_cli
    from fp8lint.frameworks.maxtext import cli as maxtext_cli
    from fp8lint.frameworks.mlperf import reader as mlperf
    from fp8lint.frameworks.nemo2 import perf_cli
    from fp8lint.frameworks.swift import reader as swift

    commands: list[CommandReader] = [
        perf_cli.from_command,  # NVIDIA's perf launchers: `pretrain_*.py` with NeMo's flags
        bridge_cli.from_command,  # before Megatron: Bridge examples are `pretrain_*.py` too
        swift.from_command,
        maxtext_cli.from_command,
    ]
    return commands, [mlperf.from_script, bridge_cli.from_script]


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """The sites of `command` when a family here owns it, else None."""
    readers, _ = families()
    for reader in readers:
        found = reader(file, command, script)
        if found is not None:
            return found
    return None


def from_script(
    file: SourceFile, script: Script, sites: Sequence[Fp8Site], reader: Reader | None = None
) -> list[Fp8Site]:
    """Sites made of a script's variables rather than of one command."""
    _, readers = families()
    out: list[Fp8Site] = []
    for read in readers:
        out.extend(read(file, script, [*sites, *out], reader))
    return out
