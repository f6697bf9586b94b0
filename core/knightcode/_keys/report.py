"""The keys doctor's findings as plain lines, shared by ``knightcode keys doctor`` and ``/keys``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from knightcode._keys.doctor import Finding, Terminal

__all__ = ["report_lines"]

_ENCODINGS = {
    "kitty": "the Kitty keyboard protocol",
    "modifyOtherKeys": "xterm's modifyOtherKeys",
    "legacy": "legacy sequences (no reply to the Kitty or modifyOtherKeys query)",
    "unknown": "not asked",
}


def _terminal_lines(terminal: Terminal) -> list[str]:
    lines = ["Terminal"]
    lines.append(f"  terminal answered: {_ENCODINGS[terminal.encoding]}")
    if terminal.program:
        lines.append(f"  terminal program: {terminal.program}")
    if terminal.tmux:
        extended = terminal.tmux_extended_keys or "unknown"
        prefixes = ", ".join(terminal.tmux_prefixes) or "none"
        shape = (
            f" (format {terminal.tmux_extended_format})" if terminal.tmux_extended_format else ""
        )
        lines.append(f"  tmux: extended-keys {extended}{shape}; prefix {prefixes}")
    if terminal.screen:
        lines.append(f"  screen: yes (command key {terminal.screen_escape})")
    lines.append(f"  keys reach knightcode as: {terminal.effective}")
    if terminal.tmux and terminal.tmux_extended_keys == "off":
        lines.append(
            "  hint: put `set -s extended-keys on` in ~/.tmux.conf and restart tmux "
            "(docs/terminal-setup.md)"
        )
    return lines


def _finding_line(finding: Finding) -> str:
    what = "cannot be delivered" if finding.kind == "undeliverable" else "collides"
    binding = finding.binding
    if binding.is_plugin:
        advice = "a plugin's key (keybindings.json cannot move it)"
    elif finding.proposal is None:
        advice = "no free alternative found: choose one in keybindings.json"
    elif finding.already_bound:
        advice = f"use {finding.proposal} (already bound)"
    else:
        advice = f"proposed: {finding.proposal}"
    return f"  {binding.key:<16} {binding.owner:<34} {what}: {finding.reason} → {advice}"


def report_lines(
    terminal: Terminal,
    findings: Sequence[Finding],
    values: dict[str, list[str]],
    path: Path | None,
) -> list[str]:
    """The report: the terminal, every binding that does not work, the proposed file values."""
    lines = _terminal_lines(terminal)
    lines.append("")
    if not findings and terminal.effective == "unknown":
        lines.append("No binding is known not to work here (the terminal itself was not asked).")
    elif not findings:
        lines.append("Every active binding reaches knightcode here.")
    else:
        lines.append(f"Bindings that do not work here ({len(findings)})")
        lines += [_finding_line(f) for f in findings]
    if values:
        lines.append("")
        lines.append(f"Proposed changes to {path or 'keybindings.json'}:")
        lines += [f"  {json.dumps(action)}: {json.dumps(keys)}" for action, keys in values.items()]
    return lines
