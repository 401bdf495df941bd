"""fp8lint over real third-party configs (../shared/corpus/real; skipped where absent)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from fp8lint.documents import kind_for

from ..conftest import run_cli


def findings(corpus: Path) -> tuple[list[dict[str, object]], str]:
    r = run_cli("check", str(corpus), "--output-format", "json", "--exit-zero")
    assert r.returncode == 0
    return json.loads(r.stdout), r.stderr


def test_corpus_runs_clean_of_crashes(corpus: Path) -> None:
    data, stderr = findings(corpus)
    assert "Traceback" not in stderr and stderr == ""
    assert not [d for d in data if d["code"] == "FP8001"], data


def test_no_warning_or_error_on_published_files(corpus: Path) -> None:
    """Every corpus file is a framework's own published config, example or script (MANIFEST):
    NVIDIA's, Accelerate's, torchtitan's, MS-AMP's, AMD's, ... None may get a warning."""
    data, _ = findings(corpus)
    loud = [
        (d["filename"], d["code"], d["message"])
        for d in data
        if d["severity"] in ("warning", "error")
    ]
    assert loud == []


def test_every_file_yields_an_fp8_site(corpus: Path) -> None:
    """`fp8lint show` names at least one FP8 site in every corpus file; the TE debug-tool
    configs count because they are read as the layers and GEMMs they change."""
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    r = run_cli("show", "--output-format", "json", *map(str, files))
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)
    with_sites = {str(Path(str(s["path"])).resolve()) for s in shown}
    blind = [f.name for f in files if str(f.resolve()) not in with_sites]
    assert blind == []
    debug = [s for s in shown if "debug__test_configs" in str(s["path"])]
    assert len({s["path"] for s in debug}) == 3
    assert all(s["precision_overrides"] for s in debug)


def test_every_data_file_is_read(corpus: Path) -> None:
    r = run_cli("check", str(corpus), "--exit-zero")
    last = next(line for line in r.stdout.splitlines() if line.startswith("Found "))
    readable = [p for p in corpus.rglob("*") if p.is_file() and kind_for(p.name) is not None]
    assert len(readable) == len([p for p in corpus.rglob("*") if p.is_file()]) - 1  # MANIFEST
    assert f"in {len(readable)} files checked" in last


def test_corpus_findings_are_the_expected_ones(corpus: Path) -> None:
    """The summary reported in the issue note; a change here is a behaviour change."""
    data, _ = findings(corpus)
    counts = Counter((Path(str(d["filename"])).parent.name, d["code"], d["severity"]) for d in data)
    # Accelerate's own templates use E4M3 for gradients with (delayed) TE scaling: info there
    assert counts[("huggingface__accelerate", "FP8206", "info")] == 2
    assert all(d["severity"] != "error" for d in data)


def test_dormant_templates_are_quiet_by_default_and_flagged_on_request(corpus: Path) -> None:
    data, _ = findings(corpus)
    assert not [d for d in data if d["code"] == "FP8405"]
    r = run_cli("check", str(corpus), "--select", "FP8405", "--output-format", "json")
    flagged = {Path(str(d["filename"])).name for d in json.loads(r.stdout)}
    # the NeMo/Launcher templates that keep history 1 + most_recent with FP8 off (MANIFEST)
    assert "examples__nlp__language_modeling__conf__megatron_falcon_config.yaml" in flagged
    assert "launcher_scripts__conf__training__llama__llama2_70b.yaml" in flagged
    assert "launcher_scripts__conf__training__gpt3__5b.yaml" not in flagged
