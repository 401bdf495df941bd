"""Launch commands in shell scripts (`.sh`, `.bash`, `.slurm`, `.sbatch`) and in CI `run:`
snippets: the training command and its flags.

Two kinds of command are read:
- Megatron entry points (`pretrain_*.py`, Megatron's `train.py`, however wrapped: `torchrun`,
  `python -m torch.distributed.run`, `srun`, `deepspeed`): their `--flags` become a Megatron
  site, exactly as a functional-test `MODEL_ARGS:` block would.
- Hydra programs (NeMo 1.x `megatron_gpt_pretraining.py --config-path=... --config-name=...`,
  NeMo-Framework-Launcher `main.py training=llama/llama2_70b`): `key=value` overrides are
  applied over the named YAML config when that file is found next to the script or in the
  working tree, and the merged, effective configuration is linted.
"""

from __future__ import annotations

import os
import re

from fp8lint.documents.shell import Word, parse
from fp8lint.documents.text import Reader, SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks import hydra, megatron
from fp8lint.frameworks.base import Arg
from fp8lint.model import EditInfo, Fp8Site, Span

MEGATRON_SCRIPT = re.compile(r"(^|/)(pretrain_[\w]+\.py|train\.py)$")
HYDRA_SCRIPT = re.compile(r"\.py$")


def sites_in(file: SourceFile, text: str, reader: Reader) -> list[Fp8Site]:
    """Sites of the commands in `text`, whose indices are indices into `file` (a YAML file's
    `run:` snippet is passed as the file's text with everything else blanked out)."""
    script = parse(text)
    sites: list[Fp8Site] = []
    from fp8lint.frameworks import shell_families

    for command in script.commands:
        claimed = shell_families.from_command(file, command, script)
        if claimed is not None:  # a family of `shell_families` owns this command
            sites.extend(claimed)
            continue
        idx = next((i for i, w in enumerate(command) if MEGATRON_SCRIPT.search(w.text)), None)
        if idx is not None:
            sites.append(_megatron(file, command, idx))
        else:
            sites.extend(_hydra(file, command, reader))
    return sites + shell_families.from_script(file, script, sites, reader)


def _value(word: Word) -> object:
    text = word.text
    if len(text) <= 40 and re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return text


def _megatron(file: SourceFile, command: list[Word], idx: int) -> Fp8Site:
    flags: dict[str, Arg] = {}
    words = command[idx + 1 :]
    i = 0
    anchor: Word | None = None
    while i < len(words):
        w = words[i]
        if not w.text.startswith("--"):
            i += 1
            continue
        name, eq, inline = w.text.partition("=")
        via: tuple[Span, ...] = ()
        if eq:
            value_word = Word(inline, w.end - len(inline), w.end, w.known)
            value: object = _value(value_word) if w.known else None
            end_word = w
        elif i + 1 < len(words) and not words[i + 1].text.startswith("--"):
            value_word = words[i + 1]
            value = _value(value_word) if value_word.known else None
            end_word = value_word
            i += 1
        else:
            value_word, value, end_word = w, True, w
        value_span = file.span_of_indices(value_word.start, value_word.end)
        detached = value_word is not w and not (w.end <= value_word.start <= w.end + 64)
        if detached:  # the value comes from a variable assigned elsewhere in the script
            via = (value_span,)
        entry_end = end_word.end if not detached else w.end
        flags[name] = Arg(
            key=name,
            value=value,
            span=file.span_of_indices(w.start, max(entry_end, w.end)),
            value_span=value_span,
            known=w.known and value_word.known,
            raw=value_word.text,
            note="set through a shell variable" if detached else None,
            via=via,
        )
        if name.startswith("--fp8"):
            anchor = end_word
        i += 1
    first, last = command[idx], command[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end))
    edit = None
    if anchor is not None:
        edit = EditInfo.model_construct(
            syntax="shell",
            flow=True,
            insert_after=file.span_of_indices(anchor.start, anchor.end),
            keys=megatron.FLAG_KEYS,
        )
    script = os.path.basename(first.text)
    return megatron.site_from_flags(
        flags, file.path, span, f"Megatron launch command (`{script}`)", edit
    )


def _hydra(file: SourceFile, command: list[Word], reader: Reader) -> list[Fp8Site]:
    idx = next((i for i, w in enumerate(command) if HYDRA_SCRIPT.search(w.text)), None)
    if idx is None:
        return []
    args = command[idx + 1 :]
    config_path = config_name = None
    selection: tuple[str, str] | None = None
    overrides: list[hydra.Override] = []
    for w in args:
        text = w.text
        if text.startswith("--config-path") or text.startswith("--config-name"):
            _, _, value = text.partition("=")
            if text.startswith("--config-path"):
                config_path = value
            else:
                config_name = value
            continue
        ov = hydra.parse_override(text, file, w.start, w.end, w.known)
        if ov is None:
            continue
        if len(ov.path) == 1 and ov.op == "set" and isinstance(ov.value, str) and "/" in ov.value:
            selection = (ov.path[0], ov.value)  # launcher group selection: training=gpt3/5b
            continue
        overrides.append(ov)
    target: str | None = None
    prefix: tuple[str, ...] = ()
    base = os.path.dirname(file.path) or "."
    if config_name:
        target = _find(base, config_path or ".", config_name)
    elif selection:
        group, option = selection
        target = _find(base, "conf", f"{group}/{option}") or _find(
            base, "launcher_scripts/conf", f"{group}/{option}"
        )
        prefix = (group,)
    if target is None:
        return []
    config = hydra.load_file(target, reader)
    if config is None:
        return []
    docs = hydra._docs(config)
    if not docs:
        return []
    roots, layers = hydra.effective_layers(config, docs[0], reader)
    if not roots or not all(r.is_map for r in roots):
        return []
    mine = [o for o in overrides if o.path[: len(prefix)] == prefix]
    stripped = [
        hydra.Override(
            o.op,
            o.path[len(prefix) :],
            o.raw,
            o.value,
            o.known,
            o.key_start,
            o.key_end,
            o.value_start,
            o.value_end,
        )
        for o in mine
        if len(o.path) > len(prefix)
    ]
    if not stripped:
        return []  # the config is linted on its own; nothing here changes it
    at = file.pos_of_index(command[idx].start)
    merged = hydra.merged(roots, hydra.edits_of(stripped, file), at)
    from fp8lint.frameworks.trees import sites_of

    line = file.pos_of_index(command[idx].start).line + 1
    found = sites_of(config, [Document(root=merged, index=0, start=docs[0].start)])
    chain = [*layers, f"{file.path}:{line} (overrides)"]
    return [s.model_copy(update={"layers": chain, "edit": None}) for s in found]


def _find(base: str, config_path: str, name: str) -> str | None:
    name = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
    roots = [os.path.join(base, config_path), config_path, os.path.join(base, "..", config_path)]
    for root in roots:
        candidate = os.path.normpath(os.path.join(root, name))
        if os.path.isfile(candidate):
            return candidate
    return None
