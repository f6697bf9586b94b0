"""Interactive mode: the terminal UI (Textual), imported only when it starts."""
