"""The version of knightcode, kept in a module of its own so ``--version`` imports nothing else."""

__version__ = "0.1.0"
