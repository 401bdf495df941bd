"""Megatron-LM: command-line flags (functional-test `MODEL_ARGS`, and later launch scripts) and
`--yaml-cfg` / serialized `TransformerConfig` mappings.

Flag names and defaults: Megatron-LM `megatron/training/arguments.py` and
`megatron/core/transformer/transformer_config.py`.  In a
functional-test `model_config.yaml`, `true` means the bare flag
(`tests/functional_tests/shell_test_utils/_run_training.sh`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared.base import Arg, note
from fp8lint.frameworks.shared.megatron_flags import (
    FLAG_KEYS,
    FLAGS,
    SWITCHES,
    fields_from_flags,
    unknown_flag,
)
from fp8lint.frameworks.shared.transformer_config import (
    MODEL_TO_CONFIG,
    Profile,
    SurfaceDefaults,
    as_bool,
    build_site,
)
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import EditInfo, Fp8Site, Framework, Recipe, SourceNote, Span

MEGATRON_DEFAULTS = SurfaceDefaults("megatron")
# a mapping holds TransformerConfig fields only: the training flags (`--use-distributed-
# optimizer` ...) are not in it, so they stay unknown rather than take the flags' defaults
TC_DEFAULTS = SurfaceDefaults(None)
# a TransformerConfig mapping spells the FP8-weights field `fp8_param`
TC_KEYS = {**MODEL_TO_CONFIG, "fp8_param_gather": "fp8_param"}
MEGATRON_FLAGS = Profile(
    framework=Framework.MEGATRON,
    label="Megatron-LM",
    defaults=MEGATRON_DEFAULTS,
    keys=FLAGS,
    kind="Megatron command-line flags",
)


# a `MODEL_ARGS:` value the functional-test runner strips of its brackets
# (tests/functional_tests/shell_test_utils/_run_training.sh L148-151)
_BRACKETED = re.compile(r"\[[^\]]+\]")


def site_from_flags(
    flags: dict[str, Arg],
    path: str,
    site_span: Span,
    kind: str,
    edit: EditInfo | None = None,
    *,
    legacy: bool = False,
    unread: str | None = None,
    parser: bool = True,
) -> Fp8Site:
    """A site from Megatron flags.  `legacy`: Megatron-DeepSpeed, whose `--fp8-hybrid` sets
    the format; otherwise an FP8/FP4 flag Megatron-LM does not define is a note (FP8408).
    `unread`: a word of the command that could not be read (`$EXTRA_ARGS`), which may give
    any flag: the launch checks' training flags are then unknown where not written.
    `parser` False: a program that may add flags of its own (`train.py`), so an FP8 flag
    Megatron-LM does not define is not judged, and sets nothing."""
    profile = replace(MEGATRON_FLAGS, kind=kind, edit=edit)
    if unread is not None:
        profile = replace(profile, defaults=_Without(MEGATRON_DEFAULTS, _TRAINING_FLAGS))
    strict = parser and not legacy
    notes = unknown_flag_notes(flags) if strict else []
    refused: list[SourceNote] = []
    if strict:
        refused, bad = switch_values(flags)
        flags = {
            flag: replace(arg, known=False) if flag in bad else arg for flag, arg in flags.items()
        }
    fields = fields_from_flags(flags, legacy=legacy, parser=strict)
    site = build_site(fields, profile, path, site_span, notes=notes)
    if refused:
        site = site.model_copy(update={"invalid": [*site.invalid, *refused]})
    if unread is None:
        return site
    return _unread_note(site, unread)


# the flags a launch check needs to be absent (not TransformerConfig fields)
_TRAINING_FLAGS = frozenset(
    {
        "use_distributed_optimizer",
        "use_torch_fsdp2",
        "use_megatron_fsdp",
        "optimizer_cpu_offload",
        "reuse_grad_buf_for_mxfp8_param_ag",
        "overlap_grad_reduce",
        "overlap_param_gather",
        "overlap_param_gather_with_optimizer_step",
        "num_layers_per_virtual_pipeline_stage",
        "num_virtual_stages_per_pipeline_rank",
        "virtual_pipeline_model_parallel_size",
        "optimizer",
        "use_precision_aware_optimizer",
        "exp_avg_dtype",
        "exp_avg_sq_dtype",
        "ckpt_format",
        "cuda_graph_impl",
        "enable_cuda_graph",
        "external_cuda_graph",
    }
)
_TRAINING_FIELDS = (
    "distributed_optimizer",
    "fsdp",
    "optimizer_cpu_offload",
    "overlap_grad_reduce",
    "overlap_param_gather",
    "overlap_param_gather_with_optimizer_step",
    "virtual_pipeline",
    "optimizer",
    "precision_aware_optimizer",
    "exp_avg_dtype",
    "exp_avg_sq_dtype",
    "ckpt_format",
    "cuda_graph",
)


class _Without(Mapping[str, Any]):
    """A profile's defaults less some names (read lazily, like `SurfaceDefaults`)."""

    def __init__(self, base: Mapping[str, Any], drop: frozenset[str]) -> None:
        self.base, self.drop = base, drop

    def __getitem__(self, key: str) -> Any:
        if key in self.drop:
            raise KeyError(key)
        return self.base[key]

    def __iter__(self) -> Iterator[str]:
        return (key for key in self.base if key not in self.drop)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _unread_note(site: Fp8Site, unread: str) -> Fp8Site:
    """Say on each unwritten training flag that the unread word may set it."""
    from fp8lint.model import Setting

    update: dict[str, Setting[Any]] = {}
    for name in _TRAINING_FIELDS:
        if not getattr(site, name).written:
            update[name] = Setting[Any].model_construct(
                known=False, note=f"`{unread}` is not read and may set it"
            )
    return site.model_copy(update=update)


def switch_values(flags: Mapping[str, Arg]) -> tuple[list[SourceNote], set[str]]:
    """An FP8401 note for each FP8/FP4 switch given a value (`--fp8-param-gather false`):
    argparse refuses the word, and the switch is then unknown (the names returned)."""
    notes: list[SourceNote] = []
    bad: set[str] = set()
    for flag, arg in flags.items():
        if flag not in SWITCHES or not arg.known or arg.value is True:
            continue
        shown = arg.raw if arg.raw is not None else str(arg.value).lower()
        notes.append(
            SourceNote.model_construct(
                kind="invalid-value",
                key=flag,
                span=arg.value_span,
                message=f"`{flag}` is a switch: the parser refuses the value {shown}",
                why="Megatron's parser stops the launch on a word it cannot place",
            )
        )
        bad.add(flag)
    return notes, bad


def unknown_flag_notes(flags: Mapping[str, Arg]) -> list[SourceNote]:
    """An `unknown-flag` note (FP8408) for each FP8/FP4 flag Megatron-LM does not define."""
    notes: list[SourceNote] = []
    for flag, arg in flags.items():
        instead = unknown_flag(flag)
        if instead is None:
            continue
        use = f": {instead}" if instead else ""
        why = "Megatron's parser stops the launch on an unrecognized argument"
        notes.append(note("unknown-flag", arg, f"`{flag}` is not a Megatron-LM flag{use}", why=why))
    return notes


def from_model_args(file: SourceFile, doc: Document) -> list[Fp8Site]:
    """Functional-test `model_config.yaml`: each `MODEL_ARGS*` block is a site."""
    root = doc.root
    if root is None or not root.is_map:
        return []
    sites: list[Fp8Site] = []
    blocks = {k.raw: (k, v) for k, v in root.items()}  # a repeated key: the last one wins
    for key, value in blocks.values():
        if key.raw is None or not key.raw.startswith("MODEL_ARGS") or not value.is_map:
            continue
        flags: dict[str, Arg] = {}
        block = args_of_map(file, root, (key.raw,), value, interpolate=False)
        for name, arg in block.items():
            if not name.startswith("--"):
                continue
            if isinstance(arg.value, str) and "${" in arg.value:
                arg = replace(arg, known=False, note=f"`{arg.value}` is filled in by the launcher")
            if arg.value is None and arg.known:
                arg = replace(arg, value=True)  # an empty value is the bare flag
            elif isinstance(arg.value, str) and _BRACKETED.fullmatch(arg.value):
                arg = replace(arg, value=arg.value[1:-1])  # `"[a b]"` is the words `a b`
            flags[name] = arg
        span = file.span(key.start, value.end)
        edit = edit_info(file, doc, value, FLAG_KEYS)
        sites.append(site_from_flags(flags, file.path, span, f"Megatron `{key.raw}` block", edit))
    return sites


def _is_transformer_config(node: Node) -> bool:
    """A mapping of TransformerConfig fields: `fp8` (a format string or null, never a
    boolean `true`: that is another stack's switch) beside a delayed-scaling field."""
    keys = set(node.keys())
    pair = node.get("fp8")
    if pair is not None and pair[1].deref().kind == "scalar" and pair[1].deref().value is True:
        # another stack's switch (NeMo 1.x, LLaMA-Factory), unless the mapping names
        # Megatron's recipe and none of NeMo 1.x's own keys: then `get_fp8_recipe` refuses it
        return "fp8_recipe" in keys and not (_NEMO1_KEYS & keys)
    return (
        "fp8" in keys
        and any(
            k in keys
            for k in ("fp8_margin", "fp8_amax_history_len", "fp8_recipe", "fp8_amax_compute_algo")
        )
        and not ({"fp8_hybrid", "fp8_e4m3"} & keys)
    )


_NEMO1_KEYS = frozenset({"fp8_hybrid", "fp8_e4m3", "transformer_engine", "mcore_gpt"})


def from_transformer_config(file: SourceFile, doc: Document) -> list[Fp8Site]:
    """`--yaml-cfg` files (`language_model:` + `model_parallel:`) and serialized configs."""
    root = doc.root
    if root is None or not root.is_map:
        return []
    from fp8lint.documents.tree import walk

    sites: list[Fp8Site] = []
    for path, mapping in walk(root, max_depth=4):
        if mapping.merged or not _is_transformer_config(mapping):
            continue  # a `<<: *base` template is linted where it is merged
        prefix = ".".join(path)
        spell = (prefix + ".{key}") if prefix else "{key}"
        fields = args_of_map(file, root, path, mapping, spell)
        parent = root if len(path) <= 1 else _parent(root, path)
        for sibling in ("model_parallel",):
            pair = parent.get(sibling) if parent is not None else None
            if pair and pair[1].is_map:
                sib_path = (*path[:-1], sibling)
                for name, arg in args_of_map(
                    file, root, sib_path, pair[1], ".".join(sib_path) + ".{key}"
                ).items():
                    fields.setdefault(name, arg)
        if parent is not None and parent is not mapping:
            for name, arg in args_of_map(
                file,
                root,
                path[:-1],
                parent,
                (".".join(path[:-1]) + ".{key}") if path[:-1] else "{key}",
            ).items():
                fields.setdefault(name, arg)
        if "fp8_param" in fields and "fp8_param_gather" not in fields:
            # the TransformerConfig field (FP8 weights) that `--fp8-param-gather` sets; in a
            # mapping it is spelled `fp8_param` (Megatron-LM @d98e8a64 transformer_config.py
            # L602; `--yaml-cfg` reads it by that name, yaml_arguments.py)
            fields["fp8_param_gather"] = fields.pop("fp8_param")
        listed = _list_arg(file, mapping, "recompute_modules", spell)
        if listed is not None:
            fields.setdefault("recompute_modules", listed)
        if "fp4_param" in fields and "fp4_param_gather" not in fields:
            fields["fp4_param_gather"] = fields.pop("fp4_param")  # the same, for FP4 (L683)
        target = mapping.get("_target_")
        nemo = target is not None and "nemo" in str(target[1].deref().value)

        profile = Profile(
            framework=Framework.NEMO2 if nemo else Framework.MEGATRON,
            label="Megatron-LM",
            defaults=TC_DEFAULTS,
            surface="nemo2" if nemo else "tc",
            prefix=f"{prefix}." if prefix else "",
            kind="serialized NeMo 2 model config" if nemo else "Megatron TransformerConfig mapping",
        )
        if len(path) >= 1:
            key_pair = (_parent(root, path) or root).get(path[-1])
            span = file.span(key_pair[0].start, mapping.end) if key_pair else file.span_of(mapping)
        else:
            span = file.span_of(mapping)
        profile = replace(profile, edit=edit_info(file, doc, mapping, TC_KEYS))
        switch = _switch(file, root, path, "enabled")
        checkpointing = _switch(file, root, path, "activation_checkpointing")
        if checkpointing is not None:
            fields = _recompute(fields, checkpointing)
        site = build_site(fields, profile, file.path, span, switch=switch)
        sites.append(_unread_by_the_recipe(site, profile))
    return sites


# the fields only a delayed recipe reads: Megatron passes them to TE's DelayedScaling alone
# (megatron/core/fp8_utils.py L771-795), so a mapping's bad value elsewhere reaches nothing
_DELAYED_ONLY = ("fp8_margin", "fp8_interval", "fp8_amax_history_len", "fp8_amax_compute_algo")


# read by `__post_init__` only under `if self.fp8:` (transformer_config.py L1527-1559)
_FP8_ONLY = ("num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16")


def _unread_by_the_recipe(site: Fp8Site, profile: Profile) -> Fp8Site:
    """A `TransformerConfig` mapping is not argparse: no `type=int` and no `choices` check its
    values.  A bad delayed-scaling value is refused only when TE's `DelayedScaling` is built
    from it, so with FP8 off or another recipe it is no FP8401 error (the command line,
    where argparse checks every flag, keeps it)."""
    if not site.invalid:
        return site
    unread: set[str] = set()
    if site.enabled.value is False:  # no FP8 recipe is built: get_fp8_recipe never runs
        unread |= {profile.key(name) for name in ("fp8_recipe", *_DELAYED_ONLY, *_FP8_ONLY)}
    elif site.recipe.value not in (None, Recipe.DELAYED) or (
        site.recipe.written and not site.recipe.known
    ):
        unread |= {profile.key(name) for name in _DELAYED_ONLY}
    if site.fp4.known and not site.fp4.value:  # FP4 off: get_fp4_recipe never runs
        unread.add(profile.key("fp4_recipe"))
    kept = [note for note in site.invalid if note.key not in unread]
    return site if len(kept) == len(site.invalid) else site.model_copy(update={"invalid": kept})


def _list_arg(file: SourceFile, mapping: Node, key: str, spell: str) -> Arg | None:
    """A list of plain strings (`recompute_modules: [core_attn, layernorm]`) as one Arg; None
    when the key is missing, not a list, or holds anything but plain strings."""
    pair = mapping.get(key)
    if pair is None or not pair[1].is_seq:
        return None
    node = pair[1].deref()
    values = [child.deref() for child in node.value]
    if not values or not all(v.kind == "scalar" and isinstance(v.value, str) for v in values):
        return None
    return Arg(
        key=spell.replace("{key}", key),
        value=[str(v.value) for v in values],
        span=file.span(pair[0].start, node.end),
        value_span=file.span_of(node),
    )


def _switch(file: SourceFile, root: Node, path: tuple[str, ...], key: str) -> Arg | None:
    """The on/off `key` that governs the block at `path`: on the block itself or on a
    mapping above it (NeMo-RL's `policy.megatron_cfg.enabled` over
    `policy.megatron_cfg.fp8_cfg.enabled`).  The innermost `false` wins over everything (any
    switch off above a block turns it off); else an unreadable one, else the innermost."""
    from fp8lint.frameworks.shared.tree_args import lookup

    found: list[Arg] = []
    for depth in range(len(path), 0, -1):
        node = lookup(root, list(path[:depth]))
        if node is None or not node.is_map or node.deref().get(key) is None:
            continue
        at = path[:depth]
        arg = args_of_map(file, root, at, node.deref(), ".".join(at) + ".{key}").get(key)
        if arg is not None:
            found.append(arg)
    for arg in found:
        if arg.known and as_bool(arg.value) is False:
            return arg
    return next((a for a in found if not a.known), found[0] if found else None)


def _recompute(fields: dict[str, Arg], checkpointing: Arg) -> dict[str, Arg]:
    """NeMo-RL's `activation_checkpointing`: when true, Megatron recompute with the block's
    `recompute_granularity` (default `full`); when false, no recompute at all (NeMo-RL
    `models/policy/workers/megatron_policy_worker.py` sets the granularity only when on)."""
    out = dict(fields)
    if not checkpointing.known:
        out["recompute_granularity"] = replace(checkpointing, value=None)
    elif as_bool(checkpointing.value) is False:
        out.pop("recompute_granularity", None)
    elif "recompute_granularity" not in out:
        out["recompute_granularity"] = replace(checkpointing, value="full")
    return out


def _parent(root: Node, path: tuple[str, ...]) -> Node | None:
    from fp8lint.frameworks.shared.tree_args import lookup

    if len(path) <= 1:
        return root
    node = lookup(root, list(path[:-1]))
    return node.deref() if node is not None else None
