"""Effective configuration across files: Hydra `defaults:` chains, command-line overrides, and
the OmegaConf resolvers NeMo and its launchers register.

A YAML config may name parents in `defaults:` (Hydra: `- base`, `- group: option`; NeMo-RL
recipes: `defaults: parent.yaml`); parents are merged before the file's own keys, or after
them when they follow `_self_`.  A launch script may select a config (`--config-path/
--config-name`, or a NeMo-Framework-Launcher `training=llama/llama2_70b`) and override keys
(`model.fp8=True`, `+key=v`, `++key=v`, `~key`).  Which files and keys take part is decided
here; OmegaConf merges them (`documents.omega.merge`), and the result is one tree whose every
node still points at the file and line that wrote it, so a finding lands where the winning
value is written.  Chains are bounded and cycles are reported, never followed forever.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from fp8lint.documents.omega import Edit, Unknown
from fp8lint.documents.text import ParseError, Reader, SourceFile
from fp8lint.documents.tree import Document, Node, Pos, TreeError, load_yaml
from fp8lint.frameworks.shared.paths import inside_real, repository_root
from fp8lint.model import Fp8Site

MAX_CHAIN = 8
MAX_LAYERS = 64  # files one merged config may come from (a `defaults:` tree fans out)


# -------------------------------------------------------------------------------- resolvers
#
# The resolvers configs of the NVIDIA stacks call, as their programs register them (read at
# NVIDIA/NeMo 8cfedd72, NVIDIA/NeMo-Framework-Launcher 26e42fa9, NVIDIA-NeMo/RL 7ea279ab):
#
#   multiply(x, y) = x * y     NeMo nemo/core/config/hydra_runner.py and
#                              nemo/core/classes/modelPT.py; Launcher launcher_scripts/main.py
#   sum(x, y) = x + y          NeMo nemo/core/config/hydra_runner.py
#   divide_ceil(x, y)          Launcher launcher_scripts/main.py: ceil of x / y, as an int
#   divide_floor(x, y)         Launcher launcher_scripts/main.py: floor of x / y, as an int
#   add(a, b) = a + b          NeMo-RL nemo_rl/utils/config.py (register_omegaconf_resolvers)
#   mul(a, b) = a * b          NeMo-RL nemo_rl/utils/config.py
#   div(a, b) = a / b          NeMo-RL nemo_rl/utils/config.py (true division: a float)
#   max(a, b)                  NeMo-RL nemo_rl/utils/config.py
#
# fp8lint evaluates them on numbers only (ints and floats, not bools or text: `"4" * 2` would
# repeat the text in Python, which no FP8 setting means), with a bound on the size of the
# result.  Resolvers whose answer depends on the machine or the run stay unknown, with a note:
#   gpu_name                   NeMo nemo/core/config/hydra_runner.py (the GPU's name)
#   hydra                      Hydra's own run-time values (`${hydra:runtime.choices.x}`)
#   user                       NeMo-RL infra/nrl_k8s (the user name)
# `int_div` and `ceil` are registered by none of the three (`int_div` appears only in a
# commented-out line of the Launcher's conf/rlhf_ppo/gpt3/2b_ppo.yaml): like any resolver not
# listed here, they leave the value unknown ("uses the resolver ..., which fp8lint does not
# evaluate").

MAX_RESULT = 2**256  # larger integers are no configuration value; they stop product chains


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unknown(f"`{str(value)[:40]}` is not a number; fp8lint computes only with numbers")
    return value


def _bounded(result: int | float) -> int | float:
    if isinstance(result, int) and abs(result) > MAX_RESULT:
        raise Unknown("the result is too large to be a configuration value")
    return result


def _multiply(x: Any, y: Any) -> int | float:
    return _bounded(_number(x) * _number(y))


def _add(x: Any, y: Any) -> int | float:
    return _bounded(_number(x) + _number(y))


def _quotient(x: Any, y: Any) -> float:
    numerator, denominator = _number(x), _number(y)
    if denominator == 0:
        raise Unknown("divides by zero")
    return numerator / denominator


def _divide_ceil(x: Any, y: Any) -> int:
    return int(_bounded(math.ceil(_quotient(x, y))))


def _divide_floor(x: Any, y: Any) -> int:
    return int(_bounded(math.floor(_quotient(x, y))))


def _max(x: Any, y: Any) -> int | float:
    return max(_number(x), _number(y))


RESOLVERS: dict[str, Callable[..., Any] | str] = {
    "multiply": _multiply,
    "sum": _add,
    "divide_ceil": _divide_ceil,
    "divide_floor": _divide_floor,
    "add": _add,
    "mul": _multiply,
    "div": _quotient,
    "max": _max,
    "gpu_name": "`gpu_name` is the name of the GPU the job runs on; unknown before launch",
    "hydra": "`${{hydra:{args}}}` is filled in by Hydra when the job runs",
    "user": "`user` is the name of the user who launches the job",
}


@dataclass(frozen=True)
class Override:
    op: str  # "set" (key=v), "add" (+key=v), "force" (++key=v), "delete" (~key)
    path: tuple[str, ...]
    raw: str | None
    value: Any
    known: bool
    key_start: Pos
    key_end: Pos
    value_start: Pos
    value_end: Pos


_OVERRIDE = re.compile(r"^(?P<op>~|\+\+|\+)?(?P<key>[A-Za-z_][\w.\-/@]*)(?:=(?P<value>.*))?$", re.S)
_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


def hydra_value(text: str) -> tuple[Any, bool]:
    """(value, known) by Hydra's override grammar: bools, null, numbers, quoted strings."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true", True
    if t.lower() == "null":
        return None, True
    if _INT.match(t):
        return (int(t), True) if len(t) <= 40 else (t, False)
    if _FLOAT.match(t):
        return float(t), True
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1], True
    if t.startswith(("[", "{")) or "${" in t or "$" in t:
        return t, False
    return t, True


def parse_override(
    word: str, file: SourceFile, start: int, end: int, known: bool = True
) -> Override | None:
    """An override from one command-line word written at `start`..`end` of `file`."""
    m = _OVERRIDE.match(word)
    if m is None:
        return None
    op = {"~": "delete", "++": "force", "+": "add", None: "set"}[m.group("op")]
    if op != "delete" and m.group("value") is None:
        return None
    raw = m.group("value")
    value, ok = hydra_value(raw) if raw is not None else (None, True)
    text_key = m.group("key")
    # the word may have been quoted in the script: find the key inside the written text
    offset = max(file.text.find(text_key, start, end), start)
    value_at = offset + len(text_key) + 1 if raw is not None else offset + len(text_key)
    return Override(
        op=op,
        path=tuple(text_key.split(".")),
        raw=raw,
        value=value,
        known=ok and known,
        key_start=file.pos_of_index(offset),
        key_end=file.pos_of_index(offset + len(text_key)),
        value_start=file.pos_of_index(min(value_at, end)),
        value_end=file.pos_of_index(end),
    )


def _with_origin(p: Pos, file: SourceFile) -> Pos:
    return replace(p, origin=file)


def edits_of(overrides: list[Override], file: SourceFile) -> list[Edit]:
    """The overrides as edits for `omega.merge`, with nodes that point into the script."""
    edits: list[Edit] = []
    for ov in overrides:
        key = Node(
            "scalar",
            _with_origin(ov.key_start, file),
            _with_origin(ov.key_end, file),
            value=ov.path[-1],
            raw=ov.path[-1],
            style="plain",
        )
        value = None
        if ov.op != "delete":
            value = Node(
                "scalar",
                _with_origin(ov.value_start, file),
                _with_origin(ov.value_end, file),
                value=ov.value,
                raw=ov.raw,
                style="plain",
                typed=ov.known,
            )
        edits.append(Edit(ov.path, key, value))
    return edits


def merged(layers: list[Node], edits: list[Edit], at: Node | Pos) -> Node:
    """The layers merged by OmegaConf; a merge it refuses is an FP8001 at `at`."""
    from fp8lint.documents import omega

    try:
        return omega.merge(layers, edits)
    except omega.MergeError as exc:
        pos = at.start if isinstance(at, Node) else at
        raise ParseError(exc.message, pos.line + 1, pos.column + 1) from None


def _defaults(
    root: Node,
    folder: str,
    missing: list[tuple[str, Node]] | None = None,
    reader: Reader | None = None,
    repo: str | None = None,
    outside: list[tuple[str, Node]] | None = None,
) -> tuple[list[tuple[str, Node]], list[tuple[str, Node]]]:
    """The parent files named by `defaults:`, split at `_self_`: (merged before the file's own
    keys, merged after them).  Without `_self_` the file's own keys come last (Hydra >= 1.1).
    Parents that are not found next to the file are added to `missing` (name, entry), except
    Hydra's own groups (`hydra/...`), which come with Hydra.  A parent that is not there is
    asked of `reader` too, so the cache notes its absence and a later one is seen.  A parent
    that resolves outside the repository root `repo` (through `../..` or a link) is neither
    read nor looked for; it goes to `outside`.  A leading `/` (Hydra: from the config
    root) is taken from the file's folder, never from the file system's root."""
    pair = root.get("defaults")
    if pair is None:
        return [], []
    value = pair[1].deref()
    names: list[tuple[str, Node]] = []
    self_at: int | None = None
    if value.kind == "scalar" and isinstance(value.value, str):
        names.append((value.value, value))
    elif value.kind == "seq":
        for item in value.value:
            item = item.deref()
            if item.kind == "scalar" and item.value == "_self_":
                self_at = len(names) if self_at is None else self_at
            elif item.kind == "scalar" and isinstance(item.value, str):
                names.append((item.value, item))
            elif item.kind == "map":
                for k, v in item.value:
                    group = str(k.raw or "")
                    option = v.deref().value
                    if "@" in group or group.startswith("optional ") or not isinstance(option, str):
                        continue  # package-relocated or optional groups: not followed
                    group = group.removeprefix("override ").strip()
                    names.append((f"{group}/{option}", item))
    kept: list[tuple[int, str, Node]] = []
    seen: set[str] = set()
    for i, (name, node) in enumerate(names):
        if name in seen:
            continue  # listing a parent twice merges it once
        seen.add(name)
        relative = name.lstrip("/")
        candidate = os.path.join(
            folder, relative if relative.endswith((".yaml", ".yml")) else relative + ".yaml"
        )
        if repo is not None and not inside_real(os.path.abspath(candidate), repo):
            if outside is not None:
                outside.append((name, node))
            continue
        if os.path.isfile(candidate):
            kept.append((i, os.path.normpath(candidate), node))
        elif missing is not None and not name.lstrip("/").startswith("hydra/"):
            if reader is not None:
                reader(candidate)  # noted as unreadable: the result holds until it appears
            missing.append((name, node))
    split = len(names) if self_at is None else self_at
    return (
        [(path, node) for i, path, node in kept if i < split],
        [(path, node) for i, path, node in kept if i >= split],
    )


def effective_layers(
    file: SourceFile,
    doc: Document,
    reader: Reader,
    chain: tuple[str, ...] = (),
    missing: list[tuple[str, Node]] | None = None,
    outside: list[tuple[str, Node]] | None = None,
    repo: str | None = None,
    unread: list[str] | None = None,
) -> tuple[list[Node], list[str]]:
    """The mappings to merge for this document, base first (its `defaults:` parents, each
    with its own parents, and the document itself), and the files they come from.  The
    parents this document names that are not found go to `missing`, those outside the
    repository root (`paths.repository_root` of the first file, kept for the whole chain)
    to `outside`; a parent's own missing or outside parents are reported when that parent is
    linted.  `unread` gathers every layer at any depth that is not read (missing, outside,
    unreadable or over the size limit): what they would set is unknown to the caller."""
    root = doc.root
    if root is None or not root.is_map:
        return ([root] if root is not None else []), [file.path]
    here = os.path.normpath(os.path.abspath(file.path))
    chain = (*chain, here)
    repo = repo if repo is not None else repository_root(file.path)
    folder = os.path.dirname(file.path) or "."
    lost: list[tuple[str, Node]] = []
    away: list[tuple[str, Node]] = []
    before, after = _defaults(root, folder, lost, reader, repo, away)
    if missing is not None:
        missing.extend(lost)
    if outside is not None:
        outside.extend(away)
    if unread is not None:
        unread.extend(name for name, _ in [*lost, *away])
    layers: list[Node] = []
    names: list[str] = []
    for group in (before, None, after):
        if group is None:
            layers.append(root)
            names.append(file.path)
            continue
        for parent_path, entry in group:
            absolute = os.path.normpath(os.path.abspath(parent_path))
            if absolute in chain:
                cycle = " -> ".join(os.path.basename(c) for c in (*chain, absolute))
                raise ParseError(
                    f"`defaults:` chain cycles: {cycle}",
                    entry.start.line + 1,
                    entry.start.column + 1,
                )
            if len(chain) >= MAX_CHAIN:
                raise ParseError(
                    f"`defaults:` chain deeper than {MAX_CHAIN} files",
                    entry.start.line + 1,
                    entry.start.column + 1,
                )
            parent_file = load_file(parent_path, reader)
            pdocs = _docs(parent_file) if parent_file is not None else []
            if parent_file is None or not pdocs or pdocs[0].root is None:
                if unread is not None:  # unreadable, over the limit, or not YAML
                    unread.append(os.path.basename(parent_path))
                continue
            if not pdocs[0].root.is_map:
                continue
            players, pnames = effective_layers(
                parent_file, pdocs[0], reader, chain, repo=repo, unread=unread
            )
            layers.extend(players)
            names.extend(p for p in pnames if p not in names)
            if len(layers) > MAX_LAYERS:
                raise ParseError(
                    f"`defaults:` tree names more than {MAX_LAYERS} files",
                    entry.start.line + 1,
                    entry.start.column + 1,
                )
    return layers, names


def effective_root(
    file: SourceFile,
    doc: Document,
    reader: Reader,
    missing: list[tuple[str, Node]] | None = None,
    outside: list[tuple[str, Node]] | None = None,
    unread: list[str] | None = None,
) -> tuple[Node | None, list[str]]:
    """The document merged over its `defaults:` parents, and the files it came from."""
    layers, names = effective_layers(
        file, doc, reader, missing=missing, outside=outside, unread=unread
    )
    if len(layers) <= 1:
        return doc.root, names
    assert doc.root is not None
    pair = doc.root.get("defaults")
    return merged(layers, [], pair[0] if pair else doc.root), names


def load_file(path: str, reader: Reader) -> SourceFile | None:
    """Another file that one linted file pulls in (a `defaults:` parent, the config a script
    names), read as `open(path, encoding="utf-8-sig")` would, at most 4 Mi characters (the
    default size limit).  The bytes come through the engine's `reader`, which bounds the read
    and notes the file for the cache."""
    import io

    data = reader(path)
    if data is None:
        return None
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig").read(4 * 1024 * 1024)
    except UnicodeDecodeError:
        return None
    return SourceFile(path, text)


def _docs(file: SourceFile) -> list[Document]:
    try:
        return load_yaml(file.text, file)
    except TreeError:
        return []


def unread_layers(site: Fp8Site, parents: list[str]) -> Fp8Site:
    """`site` when `parents` (layers of its config) could not be read: a value the file does
    not write could come from one of them, so it is unknown, not the framework's default, and
    rules that need it stay silent.  FP8407 names the parents once; written values stand."""
    from fp8lint.model import SETTING_FIELDS, Setting

    named = ", ".join(f"`{p}`" for p in parents)
    update: dict[str, Setting[object]] = {}
    for name in SETTING_FIELDS:
        setting = getattr(site, name)
        if setting.provenance in ("default", "derived"):
            update[name] = Setting[object].model_construct(
                known=False,
                provenance="absent",
                key=setting.key,
                note=f"{named} may set it",
            )
    return site.model_copy(update=update)
