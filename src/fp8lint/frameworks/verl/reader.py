"""verl trainer configs and launches: the Megatron `TransformerConfig` fields a role
overrides, as YAML (`actor_rollout_ref.actor.megatron.override_transformer_config: {fp8:
e4m3, fp8_recipe: blockwise}`) or as Hydra overrides on the command line
(`+actor_rollout_ref.actor.megatron.override_transformer_config.fp8=e4m3`, often kept in a
bash array).  verl passes the dict to Megatron Core unfiltered (verl-project/verl @1dda039b
`verl/workers/engine/megatron/transformer_impl.py`), so every FP8 field it does not write is
`TransformerConfig`'s default (`surface.py`), the amax is reduced over TP x DP x CP, and the
run post-trains a trained model (a fine-tune for the severity policy).

`<role>.megatron.use_remove_padding` (default True, `verl/trainer/config/engine/megatron.yaml`
L105 @1dda039b) packs a role's micro-batches in THD format instead of padding them (BSHD):
the site's `packing`.  The MXFP8 recipe is `override_transformer_config.fp8_recipe: mxfp8`.

`actor_rollout_ref.rollout.quantization: fp8` quantizes the vLLM/SGLang rollout weights
(E4M3, 128x128 blocks): inference, recorded as a note of the training site, never a finding.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared import hydra
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.frameworks.shared.transformer_config import (
    MODEL_TO_CONFIG,
    PARALLEL_KEYS,
    Profile,
    SurfaceDefaults,
    as_bool,
    build_site,
)
from fp8lint.frameworks.shared.tree_args import args_of_map, submap
from fp8lint.model import Fp8Site, Framework, Setting, SourceNote, Span

if TYPE_CHECKING:  # the shell parser is needed only for a launch script
    from fp8lint.documents.shell import Script, Word

LABEL = "verl (Megatron TransformerConfig)"
DEFAULTS = SurfaceDefaults("verl")
# the roles whose Megatron model a trainer config overrides
ROLES = (
    ("actor_rollout_ref", "actor"),
    ("actor_rollout_ref", "ref"),
    ("critic",),
    ("reward_model",),
)
OVERRIDES = ("megatron", "override_transformer_config")
_TUNE_NOTE = "verl post-trains (PPO, GRPO, DAPO) a trained model"
# a Hydra override of one role's TransformerConfig: `+actor_rollout_ref.actor.megatron.
# override_transformer_config.fp8=e4m3`
_OVERRIDE_KEY = re.compile(
    r"^\+{0,2}(?P<role>(?:actor_rollout_ref\.(?:actor|ref))|critic|reward_model)"
    r"\.megatron\.(?:override_transformer_config\.)?(?P<key>\w+)="
)
# what verl's engine sets on the provider from `<role>.megatron` itself
# (`transformer_impl.py` `provider_overrides`, `PARALLEL_KEYS`); the override dict, applied
# after, wins.  Each as the model field it fills.
PARALLEL_FIELDS = {field: key for field, key in MODEL_TO_CONFIG.items() if key in PARALLEL_KEYS}
_BASE_NOTE = "verl's trainer config may set it"
PACKING_KEY = "use_remove_padding"  # `<role>.megatron.use_remove_padding`: THD packing
_PACK_NOTE = "verl packs micro-batches in THD format unless `use_remove_padding` is false"


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    out: list[Fp8Site] = []
    for role in ROLES:
        mapping = submap(root, *role, *OVERRIDES)
        if mapping is None or (mapping.get("fp8") is None and mapping.get("fp4") is None):
            continue
        spell = ".".join((*role, *OVERRIDES)) + ".{key}"
        fields = args_of_map(file, root, (*role, *OVERRIDES), mapping, spell)
        megatron = submap(root, *role, "megatron")
        if megatron is not None:
            outer = ".".join((*role, "megatron")) + ".{key}"
            found = args_of_map(file, root, (*role, "megatron"), megatron, outer)
            for key in (*PARALLEL_KEYS, PACKING_KEY):
                if key in found and key not in fields:
                    fields[key] = found[key]
        span = file.span_of(mapping)
        notes = _rollout(file, root) if role[0] == "actor_rollout_ref" else []
        out.append(_site(file, fields, span, ".".join(role), notes))
    return out


def _rollout(file: SourceFile, root: Node) -> list[SourceNote]:
    rollout = submap(root, "actor_rollout_ref", "rollout")
    pair = rollout.get("quantization") if rollout is not None else None
    if pair is None or str(pair[1].deref().value).lower() not in ("fp8", "mxfp8"):
        return []
    return [
        SourceNote.model_construct(
            kind="inference",
            key="actor_rollout_ref.rollout.quantization",
            span=file.span(pair[0].start, pair[1].end),
            message="the rollout engine's weights are quantized to FP8: inference, not training",
        )
    ]


def _site(
    file: SourceFile, fields: dict[str, Arg], span: Span, role: str, notes: list[SourceNote]
) -> Fp8Site:
    fields["finetune"] = Arg("verl", True, span, span, note=_TUNE_NOTE)
    packing_arg = fields.pop(PACKING_KEY, None)
    profile = Profile(
        framework=Framework.MEGATRON,
        label=LABEL,
        defaults=DEFAULTS,
        surface="verl",
        prefix=f"{role}.megatron.override_transformer_config.",
        kind=f"verl {role}.megatron.override_transformer_config",
    )
    site = build_site(fields, profile, file.path, span, notes=notes)
    # the parallel sizes a role does not write come from verl's own trainer config
    unknown = {
        name: Setting[object].model_construct(known=False, key=name, note=_BASE_NOTE)
        for name, key in PARALLEL_FIELDS.items()
        if key not in fields
    }
    if packing_arg is None:
        packing = default(True, LABEL, f"{role}.megatron.{PACKING_KEY}", span, _PACK_NOTE)
    else:
        packing = written(packing_arg, as_bool(packing_arg.value) if packing_arg.known else None)
    return site.model_copy(update={"edit": None, "packing": packing, **unknown})


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """The Hydra overrides of one verl launch, a site per role that sets `fp8` (or `fp4`);
    None when the command overrides no role's TransformerConfig."""
    by_role: dict[str, dict[str, Arg]] = {}
    words: dict[str, list[Word]] = {}
    for w in command:
        m = _OVERRIDE_KEY.match(w.text)
        if m is None:
            continue
        ov = hydra.parse_override(w.text, file, w.start, w.end, w.known)
        if ov is None:
            continue
        key = m.group("key")
        if ".override_transformer_config." not in w.text and key not in (
            *PARALLEL_KEYS,
            PACKING_KEY,
        ):
            continue
        value_span = file.span(ov.value_start, ov.value_end)
        arg = Arg(
            key=w.text.partition("=")[0].lstrip("+"),
            value=ov.value if ov.known else None,
            span=file.span_of_indices(w.start, w.end),
            value_span=value_span,
            known=ov.known,
            raw=ov.raw,
        )
        by_role.setdefault(m.group("role"), {})[key] = arg
        words.setdefault(m.group("role"), []).append(w)
    if not by_role:
        return None
    out = []
    for role, fields in by_role.items():
        if "fp8" not in fields and "fp4" not in fields:
            continue
        used = words[role]
        span = file.span_of_indices(min(w.start for w in used), max(w.end for w in used))
        out.append(_site(file, fields, span, role, []))
    return out
