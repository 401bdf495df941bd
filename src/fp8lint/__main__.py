from fp8lint.cli import entry

entry()
