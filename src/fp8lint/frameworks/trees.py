"""The tree recognizers (YAML and JSON documents, and effective configs merged from them), in
the order they are asked: the first that answers for a document wins."""

from __future__ import annotations

from collections.abc import Callable

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.accelerate import reader as accelerate
from fp8lint.frameworks.automodel import reader as automodel
from fp8lint.frameworks.deepspeed import reader as deepspeed
from fp8lint.frameworks.levanter import reader as levanter
from fp8lint.frameworks.llamafactory import reader as llamafactory
from fp8lint.frameworks.maxtext import config as maxtext
from fp8lint.frameworks.megatron import configs as megatron
from fp8lint.frameworks.nanotron import reader as nanotron
from fp8lint.frameworks.nemo1 import config as nemo1
from fp8lint.frameworks.nemo_rl import reader as nemo_rl
from fp8lint.frameworks.primus import reader as primus
from fp8lint.frameworks.te import debug as te_debug
from fp8lint.model import Fp8Site

Recognizer = Callable[[SourceFile, Document], list[Fp8Site]]

# Order matters only for files that look like two things; the first that answers wins.
RECOGNIZERS: tuple[Recognizer, ...] = (
    megatron.from_model_args,
    nemo1.from_tree,
    llamafactory.from_tree,
    accelerate.from_tree,
    automodel.from_tree,
    levanter.from_tree,
    primus.from_tree,
    nemo_rl.from_tree,
    nanotron.from_tree,
    maxtext.from_tree,
    te_debug.from_tree,
    te_debug.from_precision_config,
    deepspeed.from_tree,
    megatron.from_transformer_config,
)


def sites_of(file: SourceFile, docs: list[Document]) -> list[Fp8Site]:
    sites: list[Fp8Site] = []
    for doc in docs:
        for recognize in RECOGNIZERS:
            found = recognize(file, doc)
            if found:
                sites.extend(found)
                break
    return sites
