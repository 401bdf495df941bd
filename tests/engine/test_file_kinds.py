"""Which files a walk reads: shell scripts without an extension (by their `#!` line) and
Megatron's TE precision YAML under a `.cfg` name; other `.cfg` files are not ours."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fp8lint.documents import is_shell_script, kind_for
from fp8lint.engine.files import file_kind

from ..conftest import run_cli

LAUNCH = (
    "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1024 "
    "--fp8-amax-compute-algo max --num-layers 4 --transformer-impl transformer_engine\n"
)
TE_QUANT = """\
configs:
  mx:
    transformer_engine_config_type: TEQuantizationParams
    training_recipe:
      fp8_quantization_recipe: mxfp8
matchers:
  attn:
    config: mx
    type: glob
    pattern: "*.self_attention.*"
    enabled: true
"""


def test_shebang_lines() -> None:
    for head in (b"#!/bin/bash\n", b"#!/usr/bin/env bash\n", b"#!/usr/bin/env -S bash -e\n"):
        assert is_shell_script(head), head
    for head in (b"#!/usr/bin/env python3\n", b"# bash\n", b"", b"#!\n", b"\x00\x01"):
        assert not is_shell_script(head), head
    assert kind_for("train", b"#!/bin/sh\n") == "shell"
    assert kind_for("train.txt", b"#!/bin/sh\n") is None  # an extension decides alone
    assert kind_for("train") is None


def test_a_walk_reads_extensionless_shell_scripts_and_yaml_cfg(tmp_path: Path) -> None:
    (tmp_path / "launch_pretrain").write_text("#!/usr/bin/env bash\n" + LAUNCH)
    (tmp_path / "notes").write_text("fp8 --fp8-format hybrid\n")  # no `#!`: not a script
    (tmp_path / "tool").write_text("#!/usr/bin/env python3\nprint('--fp8-format')\n")
    (tmp_path / "te_quant.cfg").write_text(TE_QUANT)
    (tmp_path / "setup.cfg").write_text("[tool:fp8]\nfp8 = true\nfp8_margin = -1\n")
    os.mkfifo(tmp_path / "pipe")  # a FIFO without an extension is never opened for reading
    assert file_kind(str(tmp_path / "pipe")) is None
    r = run_cli("check", "--no-cache", "--show-files", ".", cwd=tmp_path)
    assert sorted(r.stdout.split()) == ["launch_pretrain", "setup.cfg", "te_quant.cfg"], r.stdout
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "Traceback" not in r.stderr and "setup.cfg" not in r.stdout, r.stdout
    r = run_cli("show", "launch_pretrain", "te_quant.cfg", cwd=tmp_path)
    assert "launch_pretrain:2:10: site 1: Megatron launch command" in r.stdout, r.stdout
    assert "te_quant.cfg:1:1: site 1: Megatron TE precision config" in r.stdout, r.stdout


def test_stdin_with_an_extensionless_name_is_read_by_its_shebang(tmp_path: Path) -> None:
    import subprocess
    import sys

    text = "#!/bin/bash\n" + LAUNCH.replace("--num-layers", "--fp8-margin -1 --num-layers")
    command = [sys.executable, "-m", "fp8lint", "check", "--no-cache", "--output-format"]
    for name, read in (("job", True), ("job.txt", False)):
        r = subprocess.run(
            [*command, "concise", "-", "--stdin-filename", name],
            input=text,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert ("FP8104" in r.stdout) is read, (name, r.stdout, r.stderr)
        assert ("not checked" in r.stderr) is not read, (name, r.stderr)


def test_walk_passes_over_what_the_directory_walk_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fp8lint.engine.files import walk_passes_over

    (tmp_path / "env1").mkdir()
    (tmp_path / "env1" / "pyvenv.cfg").write_text("home = /usr\n")
    monkeypatch.chdir(tmp_path)
    assert walk_passes_over(".github/actions/copy/train.sh")
    assert walk_passes_over("configs/.hidden/a.yaml")
    assert walk_passes_over("configs/.a.yaml")
    assert walk_passes_over("node_modules/x/a.json")
    assert walk_passes_over("env1/lib/a.yaml")  # a venv, known by its pyvenv.cfg
    assert not walk_passes_over("configs/a.yaml")
    assert not walk_passes_over("./configs/a.yaml")
    assert not walk_passes_over("a.yaml")
