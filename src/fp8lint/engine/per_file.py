"""Per-file settings: the closest configuration file's, with the command line on top, as ruff
layers them; computed once per configuration and per-file-ignores combination."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fp8lint.settings import RunSettings, Selection

if TYPE_CHECKING:
    from fp8lint.engine.config import Resolver


class SettingsCache:
    """Per-file settings: configuration (closest file) merged with the command line."""

    def __init__(self, cli: RunSettings, configs: Resolver | None) -> None:
        self.cli = cli
        self.configs = configs
        self._cache: dict[tuple[int, tuple[str, ...]], RunSettings] = {}

    def excluded(self, path: str, explicit: bool) -> bool:
        from fp8lint.engine.config import matches

        assert self.configs is not None
        cfg = self.configs.for_path(path)
        return matches(cfg.exclude + cfg.extend_exclude, path, cfg.root)

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
            return self.cli
        from fp8lint.engine.config import matches

        cfg = self.configs.for_file(path) if not explicit else self.configs.for_path(path)
        ignored = tuple(
            code
            for pattern, codes in cfg.per_file_ignores
            if matches((pattern,), path, cfg.root)
            for code in codes
        )
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
            )
        return self._cache[key]
