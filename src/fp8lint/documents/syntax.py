"""Whether a text still parses as its syntax: the last check on a fixed file before it is
written.  The fix loop compares the sites of the text before and after, but a file whose
edit broke it may have no site to compare (a Python module without FP8 words is never
parsed by a reader), so the fixed text is parsed here in full, whatever it contains."""

from __future__ import annotations


def syntax_error(text: str, kind: str) -> str | None:
    """Why `text` does not parse as `kind`, or None when it does (a shell script has no
    parser here: the shell itself is the only judge, and fp8lint never runs it)."""
    try:
        if kind == "python":
            import libcst

            libcst.parse_module(text)
        elif kind == "yaml":  # as the reader loads it (libyaml events where available)
            from fp8lint.documents.tree import load_yaml

            load_yaml(text)
        elif kind == "json":
            from fp8lint.documents.tree import load_json

            load_json(text)
        elif kind == "toml":  # as the reader loads it
            from fp8lint.documents.text import SourceFile
            from fp8lint.documents.toml import load

            load(SourceFile("", text))
    except RecursionError:
        return "nesting too deep to read"
    except Exception as exc:  # every parser's own error type: the text does not parse
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
    return None
