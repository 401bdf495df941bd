"""fp8lint: static checks for FP8 training configurations."""

__version__ = "0.1.0"
