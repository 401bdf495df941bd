"""Where files read on a linted file's behalf may come from: the repository root.

A launch script may name a config, and a config may name `defaults:` parents through `../..`;
fp8lint reads such files only when they lie inside the repository the linted file belongs
to, so a config cannot make it read the rest of the machine (`/etc/...`, a home folder).
One definition serves every framework that follows such references (`launch`, `hydra`).
"""

from __future__ import annotations

import os

MAX_DEPTH = 64  # folders climbed looking for `.git`


def repository_root(path: str) -> str:
    """The folder above which nothing is read on a file's behalf: the nearest ancestor that
    holds `.git`, else the working directory when the file lies under it, else the file's
    own folder."""
    here = os.path.dirname(os.path.abspath(path))
    folder = here
    for _ in range(MAX_DEPTH):
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    cwd = os.path.abspath(os.getcwd())
    return cwd if inside(here, cwd) else here


def inside(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies under it (both as written, normalized)."""
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def inside_real(path: str, root: str) -> bool:
    """`inside`, after following symbolic links on both sides: a link inside the repository
    that points out of it does not count as inside."""
    return inside(os.path.realpath(path), os.path.realpath(root))
