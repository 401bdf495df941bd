"""Per-file settings: the closest configuration file's, with the command line on top, as ruff
layers them; computed once per configuration and per-file-ignores combination."""

from __future__ import annotations

from fp8lint.records import replace
from fp8lint.settings import PathRules, RunSettings, Selection, Targets

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

    from fp8lint.engine.config import Resolver


class SettingsCache:
    """Per-file settings: configuration (closest file) merged with the command line."""

    def __init__(
        self, cli: RunSettings, configs: Resolver | None, paths: PathRules | None = None
    ) -> None:
        self.cli = cli
        self.configs = configs
        self.paths = paths or PathRules()
        self._cache: dict[tuple[int, tuple[str, ...]], RunSettings] = {}

    def excluded(self, path: str, explicit: bool) -> bool:
        """Whether `path` is excluded: the configuration's patterns (relative to its file),
        replaced or extended by the command line's (relative to the working directory)."""
        import os

        from fp8lint.engine.config import matches

        here = os.getcwd()
        if matches(self.paths.extend_exclude, path, here):
            return True
        if self.paths.exclude is not None:
            return matches(self.paths.exclude, path, here)
        if self.configs is None:
            return False
        cfg = self.configs.for_path(path)
        return matches(cfg.exclude + cfg.extend_exclude, path, cfg.root)

    def _ignored(self, cfg: Any, path: str) -> tuple[str, ...]:
        import os

        from fp8lint.engine.config import matches

        if self.paths.per_file_ignores is not None:
            pairs, root = self.paths.per_file_ignores, os.getcwd()
        elif cfg is not None:
            pairs, root = cfg.per_file_ignores, cfg.root
        else:
            return ()
        return tuple(
            code for pattern, codes in pairs if matches((pattern,), path, root) for code in codes
        )

    def _selection(self, cfg: Any, ignored: tuple[str, ...]) -> Selection:
        """Layers as in ruff: a `select` on the command line starts the set afresh, so the
        file's select/extend-select/ignore drop out; per-file ignores always apply."""
        cli = self.cli.selection
        if cli.select is not None:
            return Selection(cli.select, cli.extend_select, cli.ignore + ignored)
        return Selection(
            cfg.select, cfg.extend_select + cli.extend_select, cfg.ignore + ignored + cli.ignore
        )

    def settings(self, path: str, explicit: bool = True) -> RunSettings:
        """The settings for `path`; `explicit` False: a file found by walking a folder."""
        if self.configs is None:
            ignored = self._ignored(None, path)
            if not ignored:
                return self.cli
            sel = self.cli.selection
            selection = Selection(sel.select, sel.extend_select, sel.ignore + ignored)
            return replace(self.cli, selection=selection)
        cfg = self.configs.for_file(path) if not explicit else self.configs.for_path(path)
        ignored = self._ignored(cfg, path)
        key = (id(cfg), ignored)
        if key not in self._cache:
            cli = self.cli
            options = {c: dict(o) for c, o in cfg.options.items()}
            for code, values in cli.options.items():
                options.setdefault(code, {}).update(values)
            given = cli.command_line
            self._cache[key] = RunSettings(
                selection=self._selection(cfg, ignored),
                options=options,
                max_bytes=cli.max_bytes
                if "max_bytes" in given or cfg.max_file_size is None
                else cfg.max_file_size,
                severity={**cfg.severity, **cli.severity},
                file_timeout=cli.file_timeout
                if "file_timeout" in given or cfg.file_timeout is None
                else cfg.file_timeout,
                command_line=given,
                plan_fixes=cli.plan_fixes,
                targets=Targets({**cfg.target_versions, **cli.targets.versions}),
            )
        return self._cache[key]
