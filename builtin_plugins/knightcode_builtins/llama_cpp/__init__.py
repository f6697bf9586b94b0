"""builtin:llama.cpp — local models through a llama.cpp router (in progress)."""
