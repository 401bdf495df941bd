"""Finding files and reading them: discovery (with `.gitignore` and exclusions), bounded
reads, decoding (byte-order marks, UTF-16/32) and the byte-level prefilter.

This module stays light: a pre-commit call on files without FP8 settings imports nothing else.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Callable, Iterable, Iterator

from fp8lint.diagnostics import LocatedError
from fp8lint.documents import HEAD_BYTES, kind_for
from fp8lint.records import record

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

# The prefilter: a file that names none of these cannot hold FP8 settings.  The first words
# match in any case, the others as written: `msamp` in any case would catch every
# `RandomSampler`.  Lightning's `precision="transformer-engine"` and `TransformerEnginePrecision`,
# Accelerate's `AORecipeKwargs`, a bare `te.autocast()` and TE's `CustomRecipe` (a quantizer
# factory's recipe) set FP8 without saying it, and so do three Megatron-Bridge recipe names
# (`bridge.cli.HIDDEN_PRESETS`), and so does torchao's `MXLinearConfig()` (MXFP8 by default).
# Substring tests on a lowered copy run ~7x faster than one (?i) regex.
# `fp4` covers NVFP4 and MXFP4 and Megatron's `--fp4-format` (an FP4-only config names no FP8)
# bench/floor.py reads both tuples from this file's text: keep them literal tuples of bytes.
PREFILTER_ANY_CASE = (b"fp8", b"float8", b"delayedscaling", b"fp4")  # as in `mentions_fp8`
PREFILTER_EXACT = (
    b"msamp",
    b'"mx"',
    b'.mx"',  # torchtitan's 2025-09 TOML converter names (`quantize.linear.mx`, ...)
    b"transformer-engine",
    b"TransformerEnginePrecision",
    b"AORecipeKwargs",
    b"te.autocast",
    b"CustomRecipe",
    b"nemotronh_",
    b"nemotron_nano_12b_v2",
    b"low_precision_pretrain",
    b"padding-for-quantization",  # Megatron's MoE padding for a quantized GEMM (no `fp8`)
    b"padding_for_quantization",
    b"MXLinearConfig",  # torchao's MX training config (MXFP8 by default: no `fp8` written)
)


def mentions_fp8(data: bytes) -> bool:
    """The byte-level prefilter (UTF-8 and ASCII-compatible text).  Written out rather than
    looping over the word lists: this runs on every file of a tree."""
    if (
        b"msamp" in data
        or b'"mx"' in data
        or b'.mx"' in data
        or b"transformer-engine" in data
        or b"TransformerEnginePrecision" in data
        or b"AORecipeKwargs" in data
        or b"te.autocast" in data
        or b"CustomRecipe" in data
        or b"nemotronh_" in data  # Bridge recipes whose names hide an FP8 preset
        or b"nemotron_nano_12b_v2" in data
        or b"low_precision_pretrain" in data
        or b"padding-for-quantization" in data
        or b"padding_for_quantization" in data
        or b"MXLinearConfig" in data
    ):
        return True
    low = data.lower()
    return b"fp8" in low or b"float8" in low or b"delayedscaling" in low or b"fp4" in low


def mentions_fp8_text(text: str) -> bool:
    """The prefilter on decoded text (files in UTF-16 or UTF-32)."""
    return mentions_fp8(text.encode("utf-8", errors="surrogatepass"))


SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env"})
BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


# --------------------------------------------------------------------------- discovery


Excluder = Callable[[str, bool], bool]


def discover(
    paths: Iterable[str],
    excluded: Excluder | None = None,
    force_exclude: bool = False,
    skipped: list[tuple[str, str]] | None = None,
) -> Iterator[tuple[str, bool]]:
    """(path, named explicitly) for every file to lint, in a stable order.  `excluded` prunes
    configured exclusions while walking; a file named explicitly is linted anyway unless
    `force_exclude` (what pre-commit needs, since it names every file).  A file is linted
    once, under the first name it is found by (a file and a link to it are one file), and a
    symbolic link whose target lies outside the link's repository is not read: it goes to
    `skipped` with the reason."""
    seen: set[str] = set()
    for root in paths:
        if os.path.isdir(root):
            if excluded is not None and force_exclude and excluded(root, True):
                continue
            yield from _walk(root, excluded, seen, skipped)
        elif excluded is None or not force_exclude or not excluded(root, True):
            if os.path.islink(root) and not _link_inside(root, skipped):
                continue
            real = os.path.realpath(root)
            if real not in seen:
                seen.add(real)
                yield root, True


LINK_OUTSIDE = "a symbolic link to a file outside its repository: not read"


def _link_inside(link: str, skipped: list[tuple[str, str]] | None) -> bool:
    """Whether a link's target lies inside the repository the link belongs to (`.git`
    found above it, as for every file read on a linted file's behalf)."""
    from fp8lint.frameworks.shared.paths import inside_real, repository_root

    if inside_real(link, repository_root(link)):
        return True
    if skipped is not None:
        skipped.append((link, LINK_OUTSIDE))
    return False


def _walk(
    top: str,
    excluded: Excluder | None = None,
    seen: set[str] | None = None,
    skipped: list[tuple[str, str]] | None = None,
) -> Iterator[tuple[str, bool]]:
    """Files under `top`, each folder's files (sorted) before its sub-folders (sorted), as
    `os.walk` orders them; linked folders are not entered.  `os.scandir` tells links apart
    without a `stat` per file."""
    seen = set() if seen is None else seen
    real_top = os.path.realpath(top)
    # (folder, its real path, the (directory, PathSpec) of each .gitignore above it)
    stack: list[tuple[str, str, list[tuple[str, Any]]]] = [(top, real_top, [])]
    while stack:
        dirpath, real_dir, ignores = stack.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        if any(e.name == ".gitignore" for e in entries):
            spec = _read_gitignore(os.path.join(dirpath, ".gitignore"))
            if spec is not None:
                ignores = [*ignores, (dirpath, spec)]
        folders = []
        # links after the folder's files: a file and a link to it are linted under its name
        for entry in sorted(entries, key=_is_link):
            name, full = entry.name, os.path.join(dirpath, entry.name)
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if entry.is_symlink() or name.startswith(".") or name in SKIP_DIRS:
                    continue
                if os.path.exists(os.path.join(full, "pyvenv.cfg")):
                    continue
                if _ignored(full + "/", ignores) or (
                    excluded is not None and excluded(full, False)
                ):
                    continue
                folders.append((full, os.path.join(real_dir, name), ignores))
                continue
            if name.startswith(".") or file_kind(full) is None or _ignored(full, ignores):
                continue
            if excluded is not None and excluded(full, False):
                continue
            if _is_link(entry):
                if not _link_inside(full, skipped):
                    continue
                real = os.path.realpath(full)
            else:
                real = os.path.join(real_dir, name)
            if real in seen:
                continue
            seen.add(real)
            yield full, False
        stack.extend(reversed(folders))


def walk_passes_over(path: str) -> bool:
    """Whether a walk of the working directory would leave out the file `path` (relative to
    it) for where it lies: a hidden name, or a hidden, skipped or venv folder on the way, as
    `_walk` judges them (the review bot's changed files, which come from the API)."""
    parts = os.path.normpath(path).split(os.sep)
    if os.path.isabs(path) or parts[0] == os.pardir:
        return False
    folder = ""
    for name in parts[:-1]:
        folder = os.path.join(folder, name)
        if name.startswith(".") or name in SKIP_DIRS:
            return True
        if os.path.exists(os.path.join(folder, "pyvenv.cfg")):
            return True
    return parts[-1].startswith(".")


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _read_gitignore(path: str) -> Any:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    from fp8lint.engine.units import path_spec

    return path_spec(lines)


def _ignored(path: str, ignores: list[tuple[str, Any]]) -> bool:
    for directory, spec in ignores:
        rel = os.path.relpath(path.rstrip("/"), directory).replace(os.sep, "/")
        if path.endswith("/"):
            rel += "/"
        if spec.match_file(rel):
            return True
    return False


# --------------------------------------------------------------------------- reading


class FileProblem(LocatedError):
    """A file that cannot be read (missing, binary, wrong encoding, too large)."""


@record(frozen=True)
class Decoded:
    """A file's text and how to write it back byte-for-byte: codec and byte-order mark."""

    text: str
    encoding: str = "utf-8"
    bom: bytes = b""


def file_kind(path: str) -> str | None:
    """The document kind of a file: by its extension, or for a name without one, by a `#!`
    line that runs a shell (its first bytes, read with the bounds of every read)."""
    name = os.path.basename(path)
    if os.path.splitext(name)[1] or name.startswith("."):
        return kind_for(name)
    try:
        head, _ = read_regular(path, HEAD_BYTES)
    except OSError:
        return None
    return kind_for(name, head[:HEAD_BYTES])


def read_text(path: str, max_bytes: int) -> str | None:
    decoded = read_file(path, max_bytes)
    return decoded.text if decoded is not None else None


def read_file(path: str, max_bytes: int) -> Decoded | None:
    """The decoded file, None when it cannot hold FP8 settings (prefilter)."""
    return decode(read_bytes(path, max_bytes)[0])


class NotRegular(OSError):
    """A FIFO, socket or device where a file is expected."""


def read_regular(path: str, limit: int, follow: bool = True) -> tuple[bytes, os.stat_result]:
    """At most `limit` + 1 bytes of `path` and its stat, only when it is a regular file.

    Every read fp8lint makes (linted files, configuration files and their `extend`, Hydra
    parents, the configs a launch script names, the cache's own files) goes through here.
    The file is opened non-blocking and checked on the open descriptor, so a FIFO never
    blocks the run (not even one swapped in after a `stat`), and a device such as /dev/zero
    is never read.  `follow=False` refuses a symbolic link (the cache's files are never
    links)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(path)
        return fh.read(limit + 1), info


def read_bytes(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """A file's bytes (at most `max_bytes`) and its stat, or a FileProblem."""
    try:
        data, info = read_regular(path, max_bytes)
    except NotRegular:  # a FIFO or device named like a config
        raise FileProblem("not a regular file (pipe, socket or device): not read") from None
    except IsADirectoryError:
        raise FileProblem("is a directory, not a file") from None
    except FileNotFoundError:
        raise FileProblem("no such file (or a dangling symbolic link)") from None
    except PermissionError:
        raise FileProblem("permission denied") from None
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise FileProblem(too_large(max_bytes))
    return data, info


def too_large(max_bytes: int) -> str:
    return (
        f"file too large: over {human_size(max_bytes)} (not read; raise the limit with "
        "--max-file-size or `max-file-size`)"
    )


def human_size(n: int) -> str:
    """`16 MiB`, `512 KiB`, `1.9 MiB (2000000 bytes)`, `100 bytes`: never more than `n`."""
    for factor, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= factor:
            if n % factor == 0:
                return f"{n // factor} {unit}"
            return f"{n * 10 // factor / 10:.1f} {unit} ({n} bytes)"
    return f"{n} byte{'s' if n != 1 else ''}"


def decode(data: bytes) -> Decoded | None:
    """Decoded text, None when the bytes cannot hold FP8 settings (prefilter)."""
    bom, encoding = next(((b, enc) for b, enc in BOMS if data.startswith(b)), (b"", "utf-8"))
    if encoding == "utf-8":
        if not mentions_fp8(data):
            return None
        if b"\0" in data[:8192]:
            raise FileProblem("binary content (NUL bytes): not a text config file")
    body = data[len(bom) :]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        col = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FileProblem(
            f"not valid {encoding.upper()} text (byte 0x{body[exc.start]:02x})", line, col
        ) from None
    if encoding != "utf-8" and not mentions_fp8_text(text):
        return None
    return Decoded(text, encoding, bom)


def display_path(path: str) -> str:
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path)
        except ValueError:
            return path
        return path if rel.startswith("..") else rel
    return os.path.normpath(path)


class DisplayPaths:
    """`display_path` for files found by walking a directory, computed once per directory
    (a `relpath` per file is measurable on a 20,000-file tree)."""

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        head, tail = os.path.split(path)
        shown_dir = self._dirs.get(head)
        if shown_dir is None:
            shown_dir = self._dirs[head] = display_path(head) if head else "."
        return tail if shown_dir == "." else os.path.join(shown_dir, tail)


# one file for `_lint_job`: shown path, text, kind, settings, FP8001 enabled, record what it
# reads besides itself (for the cache)
