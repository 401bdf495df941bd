"""Launch scripts, Hydra overrides, effective configs across files, torchtitan TOML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lint.documents.shell import parse
from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.shared.hydra import hydra_value

from ..conftest import lint, run_cli

TORCHRUN = """#!/bin/bash
# Megatron launch built from variables, a string and an array
TP=4
GPT_ARGS="--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --swiglu"
FP8_ARGS=(
    --fp8-format hybrid
    --fp8-amax-history-len 1   # short on purpose
)
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    $GPT_ARGS \\
    --tensor-model-parallel-size $TP \\
    --sequence-parallel \\
    --micro-batch-size "$MBS" \\
    --pipeline-model-parallel-size=${1} \\
    "${FP8_ARGS[@]}"
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def findings(root: Path, *paths: str) -> list[dict[str, object]]:
    r = run_cli("check", *(paths or (".",)), "--output-format", "json", "--exit-zero", cwd=root)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    data: list[dict[str, object]] = json.loads(r.stdout)
    return data


# ----------------------------------------------------------------------------- shell


def test_shell_words_quotes_continuations_and_variables() -> None:
    script = parse(
        'A=1\nexport B="x y"\nC=( --p "q r" )\n'
        "run.py --a $A --b $B \"$B\" '$A' ${C[@]} --u $UNSET \\\n  --last # comment\n"
    )
    (cmd,) = [c for c in script.commands if c[0].text == "run.py"]
    texts = [(w.text, w.known) for w in cmd]
    assert texts == [
        ("run.py", True),
        ("--a", True),
        ("1", True),
        ("--b", True),
        ("x", True),
        ("y", True),
        ("x y", True),
        ("$A", True),
        ("--p", True),
        ("q", True),  # unquoted ${C[@]}: bash splits the element "q r" into two words
        ("r", True),
        ("--u", True),
        ("$UNSET", False),
        ("--last", True),
    ]
    # expanded words keep the span where their text is written
    one = cmd[2]
    assert script.text[one.start : one.end] == "1"


def test_torchrun_script_builds_a_megatron_site() -> None:
    file = SourceFile("train.sh", TORCHRUN)
    (site,) = parse_file(file, "shell")
    assert site.kind == "Megatron launch command (`pretrain_gpt.py`)"
    assert site.enabled.value is True and site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (6, 18)
    assert site.amax_history_len.value == 1 and site.amax_history_len.span.line == 7  # type: ignore[union-attr]
    assert site.tensor_parallel.value == 4
    assert site.tensor_parallel.span.line == 3  # type: ignore[union-attr]  # TP=4
    assert site.sequence_parallel.value is True
    assert site.hidden_size.value == 2048 and site.gated_mlp.value is True
    assert site.micro_batch_size.known is False  # "$MBS": not guessed
    assert site.pipeline_parallel.known is False  # ${1}


def test_torchrun_script_findings_and_fix(tmp_path: Path) -> None:
    write(tmp_path, {"train.sh": TORCHRUN})
    data = findings(tmp_path)
    assert [(d["code"], d["location"]["row"]) for d in data] == [  # type: ignore[index]
        ("FP8201", 6),
        ("FP8101", 7),
    ]
    r = run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    text = (tmp_path / "train.sh").read_text()
    assert (
        "    --fp8-amax-history-len 1024 --fp8-amax-compute-algo max   # short on purpose\n" in text
    )
    assert text.replace("1024 --fp8-amax-compute-algo max", "1") == TORCHRUN


def test_legacy_flags_and_bare_flags() -> None:
    # Megatron-DeepSpeed still defines the legacy format flags
    text = (
        "python pretrain_gpt.py --deepspeed --fp8-hybrid --fp8-margin=2 --fp8-interval 1 --bf16\n"
    )
    (site,) = parse_file(SourceFile("x.sh", text), "shell")
    assert site.fmt.value is not None and site.fmt.value.value == "hybrid"
    assert site.margin.value == 2 and site.interval.value == 1
    assert not site.notes
    # Megatron-LM does not: the flag sets nothing and is an unknown-flag note
    (site,) = parse_file(SourceFile("x.sh", text.replace("--deepspeed ", "")), "shell")
    assert site.enabled.value is False
    assert [(n.kind, n.key, n.span.column) for n in site.notes] == [
        ("unknown-flag", "--fp8-hybrid", 24)
    ]


# ----------------------------------------------------------------------------- Hydra


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("True", True),
        ("false", False),
        ("null", None),
        ("12", 12),
        ("1e-3", 1e-3),
        ("'max'", "max"),
        ('"a b"', "a b"),
        ("most_recent", "most_recent"),
    ],
)
def test_hydra_value_grammar(text: str, value: object) -> None:
    assert hydra_value(text) == (value, True)


NEMO_BASE = (
    "trainer:\n  devices: 8\n  num_nodes: 2\n"
    "model:\n  transformer_engine: true\n  fp8: false\n  fp8_hybrid: true\n"
    "  fp8_margin: 0\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n"
    "  tensor_model_parallel_size: 2\n"
)


def test_nemo_script_overrides_a_template_in_the_tree(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/gpt.yaml": NEMO_BASE,
            "scripts/run.sh": (
                "python megatron_gpt_pretraining.py --config-path=../conf --config-name=gpt \\\n"
                "    model.fp8=True +model.sequence_parallel=true ~model.fp8_margin\n"
            ),
        },
    )
    data = findings(tmp_path)
    # reported at the script, which switches FP8 on over the template; the template's line
    # that holds the value is the related location
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [  # type: ignore[index]
        ("scripts/run.sh", 2, "FP8101"),
    ]
    related = data[0]["related"]
    assert [(r["filename"], r["location"]["row"]) for r in related] == [("conf/gpt.yaml", 10)]  # type: ignore[index, union-attr, attr-defined]
    note = str(data[0]["note"])
    assert "effective config: conf/gpt.yaml > scripts/run.sh:1 (overrides)" in note
    # the template alone is quiet (FP8 is off there)
    assert findings(tmp_path, "conf/gpt.yaml") == []


def test_three_level_defaults_chain(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/base.yaml": NEMO_BASE,
            "conf/mid.yaml": "defaults:\n  - base\nmodel:\n  fp8_amax_history_len: 1024\n",
            "conf/top.yaml": (
                "defaults:\n  - mid\n  - _self_\nmodel:\n  fp8: true\n"
                "  tensor_model_parallel_size: 3\n"
            ),
        },
    )
    data = findings(tmp_path)
    rows = [(d["filename"], d["location"]["row"], d["code"]) for d in data]  # type: ignore[index]
    # history 1024 (mid) with most_recent (base): each finding points at the winning value
    assert ("conf/mid.yaml", 4, "FP8103") in rows
    assert ("conf/base.yaml", 10, "FP8101") in rows
    # TP 3 (top) does not divide 16 GPUs (base's trainer): reported where TP is written
    assert ("conf/top.yaml", 6, "FP8305") in rows
    assert all("conf/base.yaml > conf/mid.yaml > conf/top.yaml" in str(d["note"]) for d in data)
    r = run_cli("show", "conf/top.yaml", cwd=tmp_path)
    assert "layers (base first): conf/base.yaml > conf/mid.yaml > conf/top.yaml" in r.stdout
    assert "written at conf/mid.yaml:4:25 `model.fp8_amax_history_len`" in r.stdout


def test_defaults_cycle_is_a_clear_finding(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/a.yaml": "defaults:\n  - b\nmodel:\n  transformer_engine: true\n  fp8: true\n",
            "conf/b.yaml": "defaults:\n  - a\nmodel:\n  fp8_hybrid: true\n",
        },
    )
    data = findings(tmp_path)
    cycles = [d for d in data if d["code"] == "FP8001"]
    assert {d["filename"] for d in cycles} == {"conf/a.yaml", "conf/b.yaml"}
    assert all("`defaults:` chain cycles" in str(d["message"]) for d in cycles)


def test_launcher_selection_and_overrides(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "launcher_scripts/conf/training/llama/llama2_70b.yaml": NEMO_BASE.replace(
                "tensor_model_parallel_size: 2", "tensor_model_parallel_size: 4"
            ),
            "run_llama.sh": (
                "HYDRA_FULL_ERROR=1 python3 launcher_scripts/main.py \\\n"
                "    training=llama/llama2_70b \\\n"
                "    training.model.fp8=True training.model.fp8_hybrid=True\n"
            ),
        },
    )
    data = findings(tmp_path)
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [  # type: ignore[index]
        ("run_llama.sh", 3, "FP8101"),  # at the override that switches FP8 on
    ]
    assert "run_llama.sh:1 (overrides)" in str(data[0]["note"])


# ----------------------------------------------------------------------------- TOML


TITAN = (
    '[model]\nname = "llama3"\nconverters = ["float8"]\n\n'
    "[parallelism]\ntensor_parallel_degree = 8\n\n"
    "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n"
)


def test_torchtitan_output_in_filter_or_not(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "with_output.toml": TITAN + 'filter_fqns = ["output"]\n',
            "without_output.toml": TITAN + 'filter_fqns = ["attention.wq"]\n',
            "moe.toml": TITAN.replace('"llama3"', '"llama4"') + 'filter_fqns = ["output"]\n',
            "mx.toml": '[model]\nname = "llama3"\nconverters = ["mx"]\n\n[quantize.linear.mx]\n'
            'recipe_name = "mxfp8_cublas"\n',
        },
    )
    data = findings(tmp_path)
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [  # type: ignore[index]
        ("moe.toml", 10, "FP8203"),
        ("without_output.toml", 10, "FP8202"),
    ]


def test_toml_syntax_error(tmp_path: Path) -> None:
    write(tmp_path, {"bad.toml": '[model]\nconverters = ["float8"\n'})
    (d,) = findings(tmp_path)
    assert d["code"] == "FP8001" and d["location"]["row"] == 3  # type: ignore[index]


def test_corpus_and_scripts_together(corpus: Path, tmp_path: Path) -> None:
    """Real configs plus launch scripts that switch templates on: no crash, and every
    finding that comes from a merged config names its layers."""
    import shutil

    tree = tmp_path / "tree"
    shutil.copytree(corpus, tree)
    launcher = "NVIDIA__NeMo-Framework-Launcher"
    (tree / launcher / "conf" / "training" / "llama").mkdir(parents=True)
    shutil.copy(
        tree / launcher / "launcher_scripts__conf__training__llama__llama2_70b.yaml",
        tree / launcher / "conf" / "training" / "llama" / "llama2_70b.yaml",
    )
    (tree / launcher / "run.sh").write_text(
        "python3 main.py training=llama/llama2_70b training.model.fp8=True "
        "training.model.fp8_hybrid=True\n"
    )
    data = findings(tree)
    assert not [d for d in data if d["code"] == "FP8001"]
    merged = [d for d in data if "run.sh:1 (overrides)" in str(d["note"])]
    loud = [d for d in merged if d["severity"] != "info"]
    assert [d["code"] for d in loud] == ["FP8101"]
    assert str(loud[0]["filename"]).endswith(f"{launcher}/run.sh")  # the script's finding
    # every finding of the tree that is not from a single file names its layers
    assert all(
        "effective config:" in str(d["note"])
        for d in data
        if str(d["filename"]).endswith("conf/training/llama/llama2_70b.yaml")
    )


def test_launch_commands_inside_yaml_run_fields(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "ci.yaml": (
                "jobs:\n  train:\n    steps:\n      - name: smoke\n        run: |\n"
                "          TP=2\n"
                "          torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
                "            --tensor-model-parallel-size $TP \\\n"
                "            --fp8-format hybrid\n"
                "  other:\n    script:\n"
                '      - "python pretrain_gpt.py --fp8-format e4m3 --fp8-amax-history-len 1024'
                ' --fp8-amax-compute-algo max"\n'
            )
        },
    )
    data = findings(tmp_path)
    assert [(d["location"]["row"], d["location"]["column"], d["code"]) for d in data] == [  # type: ignore[index]
        (9, 26, "FP8101"),
        (12, 46, "FP8206"),
    ]
    run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    text = (tmp_path / "ci.yaml").read_text()
    assert "--fp8-format hybrid --fp8-amax-history-len 1024 --fp8-amax-compute-algo max\n" in text
    assert '"python pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1024' in text
    assert findings(tmp_path) == []


def test_repeated_model_args_key_uses_the_last_block() -> None:
    from fp8lint.engine import parse_file

    text = "MODEL_ARGS:\n  --fp8-format: hybrid\nMODEL_ARGS:\n  --bf16: true\n"
    (site,) = parse_file(SourceFile("m.yaml", text), "yaml")
    assert site.enabled.value is False and site.span.line == 3


def test_self_doubling_shell_variables_stay_bounded() -> None:
    lines = ["V0=--fp8-format"] + [f'V{i}="$V{i - 1} $V{i - 1}"' for i in range(1, 40)]
    script = parse("\n".join(lines) + "\npython pretrain_gpt.py $V39 hybrid\n")
    (cmd,) = [c for c in script.commands if c[0].text == "python"]
    assert len(cmd) <= 10_002


def test_defaults_fan_out_merges_each_parent_once(tmp_path: Path) -> None:
    files = {"c0.yaml": "model:\n  transformer_engine: true\n  fp8: false\n"}
    for i in range(1, 9):
        files[f"c{i}.yaml"] = "defaults:\n" + f"  - c{i - 1}\n" * 10 + "model:\n  x: 1\n"
    write(tmp_path, files)
    assert findings(tmp_path) == []


def test_prefilter_ignores_samplers() -> None:
    from fp8lint.engine import mentions_fp8, mentions_fp8_text

    assert not mentions_fp8(b"from torch.utils.data import RandomSampler")
    assert mentions_fp8(b'"msamp": {"enabled": true}')
    assert mentions_fp8(b"FP8_FORMAT=hybrid")
    assert mentions_fp8(b"r = transformer_engine.common.recipe.DELAYEDSCALING()")
    assert mentions_fp8(b'{"recipe": "mx"}') and not mentions_fp8(b'{"recipe": "MX"}')
    assert mentions_fp8(b"quant: NVFP4") and mentions_fp8(b"Float8LinearConfig")
    assert not mentions_fp8(b"fp16 and bf16 only; float16 too; MSAMPLES=3")
    assert mentions_fp8_text("# FP8 \u00e9t\u00e9") and not mentions_fp8_text("RandomSampler")


def test_prefilter_matches_its_declared_words() -> None:
    # the word lists document mentions_fp8 (and bench/floor.py reads them): keep them true
    from fp8lint.engine import PREFILTER_ANY_CASE, PREFILTER_EXACT, mentions_fp8

    for word in PREFILTER_ANY_CASE:
        for form in (word, word.upper(), word.capitalize()):
            assert mentions_fp8(b"x = " + form + b"\n"), form
    for word in PREFILTER_EXACT:
        assert mentions_fp8(b"x = " + word + b"\n") and not mentions_fp8(word.upper())
    assert not mentions_fp8(b"".join(w[:-1] + b" " for w in PREFILTER_ANY_CASE + PREFILTER_EXACT))


# ------------------------------------------------------------------ OmegaConf merges layers


def site_of(path: Path, kind: str = "yaml"):  # type: ignore[no-untyped-def]
    from fp8lint.engine import parse_file

    return parse_file(SourceFile(str(path), path.read_text()), kind)


def test_self_first_lets_the_parents_win(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/base.yaml": NEMO_BASE,
            "conf/own_last.yaml": "defaults:\n  - base\nmodel:\n  fp8_amax_history_len: 1024\n",
            "conf/own_first.yaml": (
                "defaults:\n  - _self_\n  - base\nmodel:\n  fp8_amax_history_len: 1024\n"
            ),
        },
    )
    (last,) = site_of(tmp_path / "conf/own_last.yaml")
    assert last.amax_history_len.value == 1024
    assert last.layers == [str(tmp_path / "conf/base.yaml"), str(tmp_path / "conf/own_last.yaml")]
    (first,) = site_of(tmp_path / "conf/own_first.yaml")
    assert first.amax_history_len.value == 1  # Hydra: what follows `_self_` wins
    assert first.amax_history_len.span.path == str(tmp_path / "conf/base.yaml")
    assert first.layers == [str(tmp_path / "conf/own_first.yaml"), str(tmp_path / "conf/base.yaml")]


def test_layers_omegaconf_cannot_merge_are_a_clear_finding(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/base.yaml": NEMO_BASE + "  fp8_config: [1, 2]\n",
            "conf/top.yaml": "defaults:\n  - base\nmodel:\n  fp8_config:\n    x: 1\n",
        },
    )
    data = findings(tmp_path, "conf/top.yaml")
    assert [(d["code"], d["location"]["row"]) for d in data] == [("FP8001", 1)]  # type: ignore[index]
    assert "OmegaConf cannot merge these layers" in str(data[0]["message"])


def test_overrides_fill_mandatory_values_and_interpolations_see_the_merge(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/gpt.yaml": (
                "model:\n  transformer_engine: true\n  fp8: ???\n  fp8_hybrid: true\n"
                "  hidden_size: 2064\n  num_attention_heads: 12\n"
                "  tensor_model_parallel_size: 8\n"
                "  ffn_hidden_size: ${multiply:4, ${.hidden_size}}\n"
                "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            ),
            "run.sh": (
                "python megatron_gpt_pretraining.py --config-path=conf --config-name=gpt \\\n"
                "    model.fp8=True model.hidden_size=4096\n"
            ),
        },
    )
    (alone,) = site_of(tmp_path / "conf/gpt.yaml")
    assert alone.enabled.known is False and "launch" in (alone.enabled.note or "")
    assert alone.ffn_hidden_size.value == 8256
    (merged,) = site_of(tmp_path / "run.sh", "shell")
    assert merged.enabled.value is True and merged.enabled.span.path == str(tmp_path / "run.sh")
    # `${.hidden_size}` is resolved in the merged config: the override's 4096
    assert merged.ffn_hidden_size.value == 16384
    assert merged.ffn_hidden_size.span.path == str(tmp_path / "conf/gpt.yaml")
    assert "`model.hidden_size`" in (merged.ffn_hidden_size.note or "")
    r = run_cli("show", "run.sh", cwd=tmp_path)
    assert "conf/gpt.yaml > run.sh:1 (overrides)" in r.stdout
    assert "written at 2:15 `model.fp8`" in r.stdout  # in the file shown: no path


# ------------------------------------------------ issue 12: arrays, sourced flags, Launcher

PAIRS = """#!/bin/bash
TRAIN_SCRIPT="pretrain_gpt.py"
TP=2
PRECISION="fp8"
LAUNCH_ARGS=(
    --nproc_per_node 8
)
PRECISION_ARGS=()
if [[ "$PRECISION" == "fp8" ]]; then
    PRECISION_ARGS+=(
        "--fp8-format hybrid"
        "--fp8-amax-history-len 1024"
        "--fp8-amax-compute-algo max"
        "--fp8-param-gather"
    )
fi
PARALLEL_ARGS=(
    "--tensor-model-parallel-size $TP"
    --sequence-parallel
    --use-distributed-optimizer
)
if [ ! -f "$TRAIN_SCRIPT" ]; then
    echo "cannot find $TRAIN_SCRIPT; run from the repository root"
    echo pretrain_gpt.py --fp8-format e4m3
    exit 1
fi
torchrun ${LAUNCH_ARGS[@]} \\
    "$TRAIN_SCRIPT" \\
    ${PRECISION_ARGS[@]} \\
    ${PARALLEL_ARGS[@]}
"""


def test_unquoted_array_of_flag_value_pairs_is_word_split(tmp_path: Path) -> None:
    """`"--fp8-format hybrid"` elements under an unquoted `${A[@]}` are two words each (bash
    field splitting); the `[ ! -f ]` test and the `echo` lines name the script but launch
    nothing.  Before: two sites, FP8 read as off, and an FP8403 error on `--fp8-param-gather`."""
    (site,) = parse_file(SourceFile("train.sh", PAIRS), "shell")
    assert site.kind == "Megatron launch command (`pretrain_gpt.py`)"
    assert site.enabled.value is True and site.fmt.value is not None
    assert site.fmt.value.value == "hybrid"
    assert site.amax_history_len.value == 1024 and site.amax_compute_algo.value.value == "max"  # type: ignore[union-attr]
    span = site.amax_history_len.span
    assert span is not None  # the value's own place inside the quoted element
    assert PAIRS.splitlines()[span.line - 1][span.column - 1 : span.end_column - 1] == "1024"
    assert site.fp8_param_gather.value is True
    # `$TP` inside an element: the value and the place it is written (TP=2)
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.span.line == 3  # type: ignore[union-attr]
    write(tmp_path, {"train.sh": PAIRS})
    assert [d for d in findings(tmp_path) if d["severity"] != "info"] == []


def test_quoted_array_expansion_keeps_each_element_one_word() -> None:
    text = 'A=("--fp8-format hybrid" --bf16)\npython pretrain_gpt.py "${A[@]}"\n'
    script = parse(text)
    (cmd,) = [c for c in script.commands if c[0].text == "python"]
    assert [w.text for w in cmd[2:]] == ["--fp8-format hybrid", "--bf16"]
    # Megatron's argparse never sees `--fp8-format` there: FP8 stays off
    (site,) = parse_file(SourceFile("q.sh", text), "shell")
    assert site.enabled.value is False
    unquoted = parse(text.replace('"${A[@]}"', "${A[@]}"))
    (cmd,) = [c for c in unquoted.commands if c[0].text == "python"]
    assert [w.text for w in cmd[2:]] == ["--fp8-format", "hybrid", "--bf16"]


def test_commands_that_only_name_the_script_are_not_sites() -> None:
    text = (
        "[ -f pretrain_gpt.py ] || exit 1\n"
        "echo pretrain_gpt.py --fp8-format e4m3\n"
        "cp pretrain_gpt.py /tmp/backup/\n"
        "if [[ -x pretrain_gpt.py ]]; then echo ok; fi\n"
    )
    assert parse_file(SourceFile("x.sh", text), "shell") == []


def test_split_array_element_fix_round_trip(tmp_path: Path) -> None:
    text = 'FP8=(\n    "--fp8-format hybrid"\n)\ntorchrun pretrain_gpt.py ${FP8[@]}\n'
    write(tmp_path, {"a.sh": text})
    assert [(d["code"], d["location"]["row"]) for d in findings(tmp_path)] == [("FP8101", 2)]  # type: ignore[index]
    run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    fixed = (tmp_path / "a.sh").read_text()
    assert fixed == text.replace(
        "hybrid", "hybrid --fp8-amax-history-len 1024 --fp8-amax-compute-algo max"
    )
    assert findings(tmp_path) == []


SOURCED = """# model options, sourced by the launch scripts of this folder
MODEL_OPTIONS="--num-layers 32 --hidden-size 4096 \\
    --fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16 \\
    --tensor-model-parallel-size 4"
ALL_OPTIONS="$MODEL_OPTIONS --seq-length 4096"
"""


def test_variable_of_megatron_flags_without_launch_line_is_a_site(tmp_path: Path) -> None:
    (site,) = parse_file(SourceFile("model_options.sh", SOURCED), "shell")
    assert site.kind == "Megatron flags in `MODEL_OPTIONS`"  # not again for ALL_OPTIONS
    assert (site.span.line, site.span.column) == (2, 1)
    assert site.enabled.value is True and site.enabled.span.line == 3  # type: ignore[union-attr]
    assert site.recipe.value is not None and site.recipe.value.value == "tensorwise"
    assert site.first_last_layers_bf16.value is True
    assert site.tensor_parallel.value == 4 and site.tensor_parallel.span.line == 4  # type: ignore[union-attr]
    # a delayed recipe there is reported where the flags are written, and fixed there
    write(tmp_path, {"opts.sh": 'OPTS="--bf16 --fp8-format hybrid"\n'})
    assert [(d["code"], d["location"]["row"]) for d in findings(tmp_path)] == [("FP8101", 1)]  # type: ignore[index]
    run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert (tmp_path / "opts.sh").read_text() == (
        'OPTS="--bf16 --fp8-format hybrid --fp8-amax-history-len 1024 '
        '--fp8-amax-compute-algo max"\n'
    )


def test_flag_variables_of_a_launching_script_are_read_through_its_launch_line() -> None:
    text = SOURCED + "torchrun pretrain_gpt.py $ALL_OPTIONS\n"
    (site,) = parse_file(SourceFile("run.sh", text), "shell")
    assert site.kind == "Megatron launch command (`pretrain_gpt.py`)"
    # a variable that only tunes FP8 (no switch) is no site of its own
    assert parse_file(SourceFile("x.sh", 'EXTRA="--fp8-param-gather"\n'), "shell") == []


LLAMA_TEMPLATE = (
    "trainer:\n  devices: 8\n  num_nodes: 1\n"
    "model:\n  transformer_engine: true\n  fp8: false\n  fp8_hybrid: false\n"
    "  fp8_margin: 0\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n"
)
WRAPPER = """#!/bin/bash
LAUNCHER_DIR=${LAUNCHER_DIR:-"/opt/NeMo-Framework-Launcher"}
DATA_DIR=${DATA_DIR}
HYDRA_FULL_ERROR=1 python3 ${LAUNCHER_DIR}/launcher_scripts/main.py \\
training=llama/llama2_7b \\
stages=[training] \\
data_dir=${DATA_DIR}/llama \\
launcher_scripts_path=${LAUNCHER_DIR}/launcher_scripts \\
base_results_dir=/results/llama2_7b \\
training.run.name="llama2_7b_fp8" \\
training.model.fp8=True \\
training.model.fp8_hybrid=True
"""


def test_launcher_wrapper_keeps_its_selection_and_finds_conf_upwards(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(
        repo,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "launcher_scripts/conf/training/llama/llama2_7b.yaml": LLAMA_TEMPLATE,
            "examples/training/llama/h100/llama2_7b_fp8.sh": WRAPPER,
        },
    )
    data = findings(repo, "examples")
    script = "examples/training/llama/h100/llama2_7b_fp8.sh"
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [  # type: ignore[index]
        (script, 11, "FP8101"),
    ]
    assert [(r["filename"], r["location"]["row"]) for r in data[0]["related"]] == [  # type: ignore[index, union-attr, attr-defined]
        ("launcher_scripts/conf/training/llama/llama2_7b.yaml", 10),
    ]
    assert f"{script}:4 (overrides)" in str(data[0]["note"])
    assert findings(repo, "launcher_scripts") == []  # the template alone: FP8 off


def test_launcher_conf_is_never_read_above_the_repository_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "conf/training/llama/llama2_7b.yaml": LLAMA_TEMPLATE,  # outside the repository
            "repo/.git/HEAD": "ref: refs/heads/main\n",
            "repo/scripts/run.sh": WRAPPER,
        },
    )
    (site,) = parse_file(SourceFile(str(tmp_path / "repo/scripts/run.sh"), WRAPPER), "shell")
    # only the overrides: the template above the root was not read, so what it would set is
    # unknown, never NeMo's defaults (issue 19, class 1)
    assert site.layers[0] == "conf/training/llama/llama2_7b.yaml (not found, not read)"
    assert not site.amax_history_len.known and site.amax_history_len.provenance == "absent"
    assert all(str(tmp_path / "conf") not in layer for layer in site.layers)


def test_launcher_conf_next_to_main_py(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git/HEAD": "x\n",
            "tools/launcher/conf/training/gpt3/5b.yaml": LLAMA_TEMPLATE,
            "run.sh": (
                "LAUNCHER_SCRIPTS_PATH=tools/launcher\n"
                "python3 ${LAUNCHER_SCRIPTS_PATH}/main.py training=gpt3/5b "
                "base_results_dir=out/gpt3 training.model.fp8=True training.model.fp8_hybrid=True\n"
            ),
        },
    )
    (site,) = site_of(tmp_path / "run.sh", "shell")
    assert site.layers[0].endswith("tools/launcher/conf/training/gpt3/5b.yaml")
    assert site.amax_history_len.value == 1 and site.enabled.value is True


def test_hydra_overrides_without_their_base_config_are_a_site(tmp_path: Path) -> None:
    text = (
        "python megatron_gpt_pretraining.py --config-path=conf --config-name=llama_fp8 \\\n"
        "    model.fp8=True model.fp8_amax_history_len=1 model.tensor_model_parallel_size=2\n"
    )
    write(tmp_path, {"run.sh": text, "other.sh": text.replace("megatron_gpt_", "my_")})
    data = findings(tmp_path)
    # the config it names is not in the repository: said once, at `--config-name`, and no
    # rule guesses the values it would set (issue 19, class 1; FP8101 fired here before)
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [  # type: ignore[index]
        ("run.sh", 1, "FP8407"),
    ]
    assert "`conf/llama_fp8.yaml`" in str(data[0]["message"])
    (site,) = site_of(tmp_path / "run.sh", "shell")
    assert site.enabled.value is True and site.enabled.span.line == 2  # type: ignore[union-attr]
    assert site.amax_history_len.value == 1 and site.amax_history_len.provenance == "written"
    assert not site.amax_compute_algo.known and not site.margin.known
    assert site.amax_compute_algo.note == "`conf/llama_fp8.yaml` may set it"
    assert site.tensor_parallel.value == 2
    assert not [n for n in site.notes if n.kind == "conflict"]  # the format may be in the base


def test_defaults_parent_that_is_not_found_is_named(tmp_path: Path) -> None:
    """Issue 13 #12: a misspelled `defaults:` parent used to be skipped without a word."""
    write(
        tmp_path,
        {
            "conf/base.yaml": NEMO_BASE,
            "conf/top.yaml": (
                "defaults:\n  - base\n  - megatron_gtp_config\n"
                "  - optional extras: fp8\n  - override hydra/launcher: submitit_slurm\n"
                "  - _self_\nmodel:\n  fp8: true\n"
            ),
        },
    )
    data = findings(tmp_path, "conf/top.yaml")
    missing = [d for d in data if d["code"] == "FP8407"]
    assert [(d["location"]["row"], d["severity"]) for d in missing] == [(3, "info")]  # type: ignore[index]
    assert "`megatron_gtp_config`" in str(missing[0]["message"])
    # the parent that exists is still merged (its margin 0 and history 1 are in the site),
    # but the missing one could set the recipe: unknown, so FP8101 does not guess (issue 19)
    assert "FP8101" not in {d["code"] for d in data}
    (site,) = [s for s in parse_file(SourceFile(str(tmp_path / "conf/top.yaml"),
               (tmp_path / "conf/top.yaml").read_text()), "yaml")]  # fmt: skip
    assert site.amax_history_len.written and site.margin.written and not site.recipe.known


def test_a_base_config_added_later_is_seen_through_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FP8LINT_NO_CACHE")  # the cache on, as a user runs it
    write(
        tmp_path,
        {
            "run.sh": (
                "python megatron_gpt_pretraining.py --config-path=conf --config-name=gpt "
                "model.fp8=True model.fp8_hybrid=True\n"
            )
        },
    )
    assert [d["code"] for d in findings(tmp_path, "run.sh")] == ["FP8407"]  # not found
    write(
        tmp_path,
        {
            "conf/gpt.yaml": (
                "model:\n  transformer_engine: true\n  fp8: false\n  fp8_hybrid: true\n"
                "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            )
        },
    )
    assert [d["code"] for d in findings(tmp_path, "run.sh")] == []  # absence was a dependency


def test_a_defaults_parent_added_later_is_seen_through_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    top = "defaults:\n  - base\n  - _self_\nmodel:\n  transformer_engine: true\n  fp8: false\n"
    write(tmp_path, {"conf/top.yaml": top + "  fp8_hybrid: true\n"})
    assert [d["code"] for d in findings(tmp_path, "conf/top.yaml")] == ["FP8407"]
    write(tmp_path, {"conf/base.yaml": NEMO_BASE})
    assert findings(tmp_path, "conf/top.yaml") == []


def test_flag_variable_read_by_another_program_is_not_a_megatron_site() -> None:
    text = 'BENCH="--fp8-format hybrid --iters 10"\nALL="$BENCH -v"\npython te_bench.py $ALL\n'
    assert parse_file(SourceFile("bench.sh", text), "shell") == []


def test_launcher_selection_without_conf_is_the_group_its_overrides_change() -> None:
    text = (
        "python3 main.py data_dir=data/llama training=llama/llama2_7b "
        "training.model.fp8=True training.model.fp8_hybrid=True\n"
    )
    (site,) = parse_file(SourceFile("run.sh", text), "shell")
    assert site.layers[0] == "conf/training/llama/llama2_7b.yaml (not found, not read)"
    assert site.enabled.value is True and not site.amax_history_len.known
    # a selection that names no config here (`llama3_405b` where only `llama2_7b` exists, or
    # no `conf/` at all) is said once, at the selection, and nothing is guessed
    (note,) = [n for n in site.notes if n.kind == "missing-config"]
    assert text[note.span.start_offset : note.span.end_offset] == "training=llama/llama2_7b"


def test_flag_equals_value_is_written_in_place_not_through_a_variable() -> None:
    """`--flag=value` holds its value in the same word (issue 19, class 8): no "shell
    variable" in the message, no "shared" in the fix; a value from a variable says so in
    shell terms (never YAML's "anchored and shared")."""
    inline = "torchrun pretrain_gpt.py --fp8-format=hybrid --fp8-amax-compute-algo=most_recent\n"
    (d,) = [d for d in lint("eq.sh", inline) if d.code == "FP8101"]
    assert "shell variable" not in d.message and "anchored" not in d.message
    assert d.fix is not None and "shared" not in d.fix.message
    through = (
        "ALGO=most_recent\ntorchrun pretrain_gpt.py --fp8-format hybrid \\\n"
        "    --fp8-amax-compute-algo $ALGO\n"
    )
    (d,) = [d for d in lint("var.sh", through) if d.code == "FP8101"]
    assert "set through a shell variable assigned at line 1" in d.message
    assert "anchored" not in d.message


def test_parameter_expansion_defaults_are_read_as_the_value() -> None:
    """`${VAR:-default}` / `${VAR:=default}` run with their default unless the environment
    sets VAR (issue 19, class 7): the default is the value, where it is written; one unknown
    expansion makes only itself unknown, never the other flags of its string."""
    script = (
        "TP_SIZE=${TP_SIZE:-2}\n"
        "PRETRAIN=${PRETRAIN:-pretrain_gpt.py}\n"
        'OPTIONS="--fp8-format hybrid --tensor-model-parallel-size ${TP_SIZE:=2} '
        '--fp8-amax-compute-algo ${ALGO:-most_recent} --micro-batch-size $MBS"\n'
        'torchrun "$PRETRAIN" $OPTIONS --train-iters ${ITERS:-500000}\n'
    )
    (site,) = parse_file(SourceFile("run.sh", script), "shell")
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.known
    assert site.amax_compute_algo.value is not None and site.amax_compute_algo.known
    assert site.train_steps.value == 500000
    assert site.micro_batch_size.value is None  # $MBS: unknown, and only it
    algo = site.amax_compute_algo.span
    assert algo is not None and script[algo.start_offset : algo.end_offset] == "most_recent"
    (d,) = [d for d in lint("run.sh", script) if d.code == "FP8101"]
    assert d.line == 3
    # `show` says the environment may override a default read as the value
    assert site.train_steps.note == "the default of `${ITERS}`; the environment may set it"


def test_a_launch_line_in_a_here_document_is_reported_but_never_fixed(tmp_path: Path) -> None:
    """Issue 20: the body of `cat > job.sh <<EOF` is data the script writes (often the job
    script itself, so its findings stay), but `--fix` does not edit it."""
    from fp8lint.engine import fix_text
    from fp8lint.settings import RunSettings

    text = (
        "#!/bin/bash\ncat > job.sh <<EOF\n"
        "python pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1 "
        "--fp8-amax-compute-algo max\nEOF\nsbatch job.sh\n"
        "sbatch <<-'END'\n\tpython pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1\n"
        "\tEND\n"
        "python pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1 "
        "--fp8-amax-compute-algo max\n"
    )
    result = fix_text("run.sh", text, "shell", RunSettings(), True)
    lines = result.text.splitlines()
    assert lines[2].endswith("--fp8-amax-history-len 1 --fp8-amax-compute-algo max")
    assert lines[6].endswith("--fp8-amax-history-len 1")
    assert "--fp8-amax-history-len 1024" in lines[8]  # the script's own command is fixed
    advice = [d for d in result.remaining if d.fix is not None and not d.fix.edits]
    assert {d.line for d in advice} == {3, 7}
    assert all("here-document" in d.fix.message for d in advice if d.fix is not None)
