"""builtin:gondolin — every tool behind an isolation boundary (work in progress)."""
