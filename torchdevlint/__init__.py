"""torchdevlint: a static analyzer for PyTorch device-management bugs."""

__version__ = "0.1.0"
