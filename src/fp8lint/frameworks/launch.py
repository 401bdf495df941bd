"""Launch commands in shell scripts (`.sh`, `.bash`, `.slurm`, `.sbatch`) and in CI `run:`
snippets: the training command and its flags.

Two kinds of command are read:
- Megatron entry points (`pretrain_*.py`, Megatron's `train.py`, however wrapped: `torchrun`,
  `python -m torch.distributed.run`, `srun`, `deepspeed`): their `--flags` become a Megatron
  site, exactly as a functional-test `MODEL_ARGS:` block would.
- Hydra programs (NeMo 1.x `megatron_gpt_pretraining.py --config-path=... --config-name=...`,
  NeMo-Framework-Launcher `main.py training=llama/llama2_70b`): `key=value` overrides are
  applied over the named YAML config when that file is found next to the script or in the
  working tree, and the merged, effective configuration is linted.  A Launcher selection
  (`training=llama/llama2_70b`) resolves in the `conf/` tree next to the program, under
  `launcher_scripts_path=`, or in one of the script's ancestors, never above the repository
  root (the nearest ancestor holding `.git`, else the working directory).  When the base
  config is not there, the overrides alone are the site, over the defaults of the framework
  the program belongs to, and the site's layers say the base was not found.
- A variable of Megatron flags that switches FP8 on (`MODEL_OPTIONS="--fp8-format hybrid
  ..."`) in a script with no launch line of its own (a file other scripts `source`) is a site,
  reported where its flags are written.

Only a command's program position counts: `[ -f pretrain_gpt.py ]`, `echo ...`, `cp`, `ls` and
the like name a script without launching it.
"""

from __future__ import annotations

import os
import re

from fp8lint.documents.shell import Script, Word, heredoc_bodies, parse
from fp8lint.documents.text import Reader, SourceFile
from fp8lint.documents.tree import Document, Pos
from fp8lint.frameworks.megatron import configs as megatron
from fp8lint.frameworks.shared import hydra
from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.megatron_flags import FLAG_KEYS
from fp8lint.frameworks.shared.nvte_env import env_settings, with_env
from fp8lint.frameworks.shared.paths import inside_real, repository_root
from fp8lint.frameworks.shared.shell_args import arg_note
from fp8lint.model import EditInfo, Fp8Site, Framework, Span

MEGATRON_SCRIPT = re.compile(r"(^|/)(pretrain_[\w]+\.py|train\.py)$")
HYDRA_SCRIPT = re.compile(r"\.py$")
# commands that name a file without running it: tests, output, file and shell utilities
NOT_LAUNCH = frozenset(
    "[ [[ test echo printf cat ls cp mv rm ln mkdir touch chmod chown cd pushd popd find "
    "grep sed awk head tail tee wc diff wget curl git scp rsync tar stat file readlink "
    "realpath dirname basename which type command source . unset return exit trap wait "
    "sleep case for select function shift set".split()
)
# launches that train through Transformer Engine, whose `NVTE_*` variables the script sets
TE_STACKS = frozenset({Framework.MEGATRON, Framework.BRIDGE, Framework.NEMO2})
# the flags that switch Megatron's FP8 on: a variable holding one is a site of its own
_ENABLING = frozenset({"--fp8-format", "--fp8-hybrid", "--fp8-e4m3"})


def sites_in(file: SourceFile, text: str, reader: Reader) -> list[Fp8Site]:
    """Sites of the commands in `text`, whose indices are indices into `file` (a YAML file's
    `run:` snippet is passed as the file's text with everything else blanked out)."""
    script = parse(text)
    sites: list[Fp8Site] = []
    from fp8lint.frameworks import shell_families

    for command in script.commands:
        if not command or command[0].text in NOT_LAUNCH:
            continue
        claimed = shell_families.from_command(file, command, script)
        if claimed is not None:  # a family of `shell_families` owns this command
            env = env_settings(file, script)
            sites.extend(with_env(s, env) if s.framework in TE_STACKS else s for s in claimed)
            continue
        idx = next((i for i, w in enumerate(command) if MEGATRON_SCRIPT.search(w.text)), None)
        if idx is not None:
            site = _megatron(file, command, idx)
            sites.append(with_env(site, env_settings(file, script)))
        else:
            sites.extend(_hydra(file, command, reader))
    if not sites:
        sites.extend(_flag_variables(file, script))
    return sites + shell_families.from_script(file, script, sites, reader)


def _enables(words: list[Word]) -> bool:
    return any(w.known and w.text.partition("=")[0] in _ENABLING for w in words)


def _flag_variables(file: SourceFile, script: Script) -> list[Fp8Site]:
    """Variables of Megatron flags that switch FP8 on, in a script that launches nothing
    itself (a file other scripts `source`): each is a site where its flags are written.  A
    variable built from another such variable (`ALL="$BASE $FP8_OPTS"`) is left to the one
    that holds the flags, and one that a command of this file reads (`python bench.py $ARGS`,
    a program fp8lint does not know) is that program's, not Megatron's."""
    used = script.used()
    found = [name for name, words in script.variables.items() if _enables(words)]
    sites: list[Fp8Site] = []
    for name in found:
        if name in used:
            continue  # a command of this file reads it: not a Megatron launch, or not ours
        if script.refs.get(name, set()) & set(found):
            continue
        words = [w for w in script.variables[name] if w.text]
        start, end = script.assigned_at[name]
        head = Word(name, start, start + len(name))
        kind = f"Megatron flags in `{name}`"
        rest = f"the command that reads `${name}`"  # its other flags are not in this file
        sites.append(_megatron(file, [head, *words], 0, kind, end, unread=rest))
    return sites


def _value(word: Word) -> object:
    text = word.text
    if len(text) <= 40 and re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return text


def _megatron(
    file: SourceFile,
    command: list[Word],
    idx: int,
    kind: str = "",
    end: int | None = None,
    unread: str | None = None,
) -> Fp8Site:
    flags: dict[str, Arg] = {}
    words = command[idx + 1 :]
    i = 0
    anchor: Word | None = None
    while i < len(words):
        w = words[i]
        if not w.text.startswith("--"):
            if not w.known and unread is None:
                unread = w.text  # `$EXTRA_ARGS`: any flag may hide in it
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
            if name in _LISTS:  # `--recompute-modules core_attn moe_act`: every word
                items = [value]
                while i + 1 < len(words) and not words[i + 1].text.startswith("--"):
                    i += 1
                    end_word = words[i]
                    items.append(_value(end_word) if end_word.known else None)
                if all(item is not None for item in items):
                    value = items
                else:
                    value_word = Word(value_word.text, value_word.start, end_word.end, False)
        else:
            value_word, value, end_word = w, True, w
        value_span = file.span_of_indices(value_word.start, value_word.end)
        # `--flag=value` holds its value inside the word; a value far away is a variable's
        detached = value_word is not w and not (w.start <= value_word.start <= w.end + 64)
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
            note=arg_note(value_word, detached),
            via=via,
        )
        if name.startswith("--fp8"):
            anchor = end_word
        i += 1
    first, last = command[idx], command[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end, end or 0))
    edit = None
    if anchor is not None:
        body = any(a <= first.start < b for a, b in heredoc_bodies(file.text))
        edit = EditInfo.model_construct(
            syntax="shell",
            flow=True,
            insert_after=file.span_of_indices(anchor.start, anchor.end),
            keys=FLAG_KEYS,
            read_only="the command is in a here-document's body" if body else None,
        )
    if DEEPSPEED_FLAGS & set(flags):
        kind = kind or f"Megatron-DeepSpeed launch command (`{os.path.basename(first.text)}`)"
        site = megatron.site_from_flags(flags, file.path, span, kind, edit, legacy=True)
        return _megatron_deepspeed(site)
    program = os.path.basename(command[idx].text)
    kind = kind or f"Megatron launch command (`{program}`)"
    # a `train.py` may be any project's, with FP8 flags of its own: only Megatron's own
    # `pretrain_*.py` (and flag variables written for them) are judged by its parser
    own = not MEGATRON_SCRIPT.search(command[idx].text) or program.startswith("pretrain_")
    return megatron.site_from_flags(flags, file.path, span, kind, edit, unread=unread, parser=own)


# flags whose value is every word up to the next flag (`nargs="*"` in Megatron's parser)
_LISTS = frozenset({"--recompute-modules"})


# the flags Megatron-DeepSpeed's `pretrain_*.py` take and Megatron-LM's do not
DEEPSPEED_FLAGS = frozenset({"--deepspeed", "--deepspeed_config", "--deepspeed-config"})


def _megatron_deepspeed(site: Fp8Site) -> Fp8Site:
    """Megatron-DeepSpeed reduces the amax over the data-parallel group alone: its
    `ParallelTransformer` passes `get_data_parallel_group()` as `fp8_group` (the code Megatron-LM
    PR #442 fixed; deepspeedai/Megatron-DeepSpeed `megatron/model/transformer.py` L1719
    @4efb479d), whatever the parallel flags say."""
    from fp8lint.model import AmaxScope, Setting

    scope = Setting[AmaxScope].model_construct(
        value=AmaxScope.DP_ONLY,
        known=True,
        provenance="default",
        key="fp8_group",
        default_of="Megatron-DeepSpeed",
        span=site.enabled.span or site.span,
        note="its transformer passes the data-parallel group as TE's fp8_group",
    )
    return site.model_copy(update={"amax_scope": scope, "edit": None})


# a Launcher group selection, `training=llama/llama2_70b`: a relative name, no variables
_SELECTION = re.compile(r"[\w.\-]+(/[\w.\-]+)+")
# NeMo 1.x's Hydra programs (examples/nlp/language_modeling/megatron_gpt_pretraining.py ...)
# and the NeMo-Framework-Launcher's main.py, whose `training` stage runs them
_NEMO1_PROGRAM = re.compile(r"(^|/)megatron_\w+\.py$")
MAX_ANCESTORS = 16  # folders walked up from a script to find its repository's `conf/` tree


def _hydra(file: SourceFile, command: list[Word], reader: Reader) -> list[Fp8Site]:
    idx = next((i for i, w in enumerate(command) if HYDRA_SCRIPT.search(w.text)), None)
    if idx is None:
        return []
    program = command[idx]
    args = command[idx + 1 :]
    config_path = config_name = None
    selections: list[tuple[str, str]] = []
    named_at = program  # the word that names the config: `--config-name`, or a selection
    selected_at: dict[tuple[str, str], Word] = {}
    overrides: list[hydra.Override] = []
    for w in args:
        text = w.text
        if text.startswith("--config-path") or text.startswith("--config-name"):
            _, _, value = text.partition("=")
            if text.startswith("--config-path"):
                config_path = value
            else:
                config_name, named_at = value, w
            continue
        ov = hydra.parse_override(text, file, w.start, w.end, w.known)
        if ov is None:
            continue
        if (
            len(ov.path) == 1
            and ov.op == "set"
            and ov.known
            and isinstance(ov.value, str)
            and _SELECTION.fullmatch(ov.value)
        ):
            selections.append((ov.path[0], ov.value))  # launcher group selection
            selected_at[selections[-1]] = w
            continue
        overrides.append(ov)
    if not overrides or not (config_name or selections):
        return []  # no config named, or nothing changed in it
    target: str | None = None
    prefix: tuple[str, ...] = ()
    wanted = ""
    base = os.path.dirname(file.path) or "."
    root = repository_root(file.path)
    nemo1 = bool(_NEMO1_PROGRAM.search(program.text))
    if config_name:
        target = _find(base, config_path or ".", config_name, root, reader)
        wanted = config_name if config_name.endswith((".yaml", ".yml")) else config_name + ".yaml"
        wanted = os.path.normpath(os.path.join(config_path or ".", wanted))
    elif selections:
        conf_dirs = _conf_dirs(file, program, overrides, root)
        for group, option in selections:
            for folder in conf_dirs:
                target = _find(folder, ".", f"{group}/{option}", root, reader)
                if target is not None:
                    break
            if target is not None:
                prefix = (group,)
                break
        if target is None:  # the group that the overrides change (`training.model.fp8=...`)
            changed = {o.path[0] for o in overrides if len(o.path) > 1}
            group, option = next((g for g in selections if g[0] in changed), selections[0])
            prefix, wanted = (group,), f"conf/{group}/{option}.yaml"
            named_at = selected_at[(group, option)]
            nemo1 = group == "training"
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
    at = file.pos_of_index(program.start)
    line = at.line + 1
    if target is None:
        if not wanted:
            return []
        named = file.span_of_indices(named_at.start, named_at.end)
        return _without_base(file, stripped, at, line, wanted, nemo1, named)
    config = hydra.load_file(target, reader)
    if config is None:
        return []
    docs = hydra._docs(config)
    if not docs:
        return []
    roots, layers = hydra.effective_layers(config, docs[0], reader, repo=root)
    if not roots or not all(r.is_map for r in roots):
        return []
    merged = hydra.merged(roots, hydra.edits_of(stripped, file), at)
    from fp8lint.frameworks.trees import sites_of

    found = sites_of(config, [Document(root=merged, index=0, start=docs[0].start)])
    chain = [*layers, f"{file.path}:{line} (overrides)"]
    return [s.model_copy(update={"layers": chain, "edit": None}) for s in found]


def _without_base(
    file: SourceFile,
    overrides: list[hydra.Override],
    at: Pos,
    line: int,
    wanted: str,
    nemo1: bool,
    named: Span,
) -> list[Fp8Site]:
    """The overrides alone, when the config they apply to is not in the repository (a typo in
    `training=llama/llama3_405b`, or a checkout without the Launcher's `conf/`): a NeMo 1.x
    program's site holds what the overrides write, and every other value is unknown, since
    the config that is not read may set it (FP8407 says so once, at the word naming it).  A
    program fp8lint cannot place gives no site."""
    if not nemo1:
        return []
    from fp8lint.documents.tree import Node
    from fp8lint.frameworks.nemo1 import config as nemo1_framework
    from fp8lint.model import SourceNote

    empty = Node("map", at, at, value=[])
    tree = hydra.merged([empty], hydra.edits_of(overrides, file), at)
    found = nemo1_framework.from_tree(
        file, Document(root=tree, index=0, start=at), base_missing=True
    )
    note = SourceNote.model_construct(
        kind="missing-config",
        key=wanted,
        span=named,
        message=f"`{wanted}` is not in the repository: its settings are unknown",
    )
    chain = [f"{wanted} (not found, not read)", f"{file.path}:{line} (overrides)"]
    return [
        hydra.unread_layers(s, [wanted]).model_copy(
            update={"layers": chain, "edit": None, "notes": [*s.notes, note]}
        )
        for s in found
    ]


def _conf_dirs(
    file: SourceFile, program: Word, overrides: list[hydra.Override], root: str
) -> list[str]:
    """Where a Launcher's `conf/` tree may be: next to its main.py, under
    `launcher_scripts_path=`, then in the script's folder and each ancestor up to the root."""
    base = os.path.dirname(os.path.abspath(file.path))
    out: list[str] = []
    if program.known:
        out.append(os.path.join(base, os.path.dirname(program.text), "conf"))
    for ov in overrides:
        if ov.path == ("launcher_scripts_path",) and ov.known and isinstance(ov.value, str):
            out.append(os.path.join(base, ov.value, "conf"))
    folder = base
    for _ in range(MAX_ANCESTORS):
        out += [os.path.join(folder, "conf"), os.path.join(folder, "launcher_scripts", "conf")]
        if os.path.normpath(folder) == os.path.normpath(root):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    seen: set[str] = set()
    kept = []
    for d in out:
        d = os.path.normpath(d)
        if d not in seen and inside_real(d, root):
            seen.add(d)
            kept.append(d if os.path.isabs(file.path) else os.path.relpath(d))
    return kept


def _find(base: str, config_path: str, name: str, root: str, reader: Reader) -> str | None:
    """The first place the config is, inside the repository once links are followed (a
    `conf/` or config that links out of it is not read).  The places where it is not are
    asked of `reader` too, so the cache notes their absence (a config added later is seen,
    not a remembered 'not found')."""
    name = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
    roots = [os.path.join(base, config_path), config_path, os.path.join(base, "..", config_path)]
    for folder in roots:
        candidate = os.path.normpath(os.path.join(folder, name))
        if not inside_real(os.path.abspath(candidate), root):
            continue
        if os.path.isfile(candidate):
            return candidate
        reader(candidate)
    return None
