"""builtin:compaction — automatic and manual compaction, overflow recovery, branch summaries (in progress)."""
