"""Every key of the reference's settings has a row in docs/settings.md ("The reference's settings,
key by key"), and every key marked honoured there has a test proving its effect (issue 17).

``KEY_TESTS`` maps each honoured key to the tests that prove it (``path::function``); this file
checks the docs table, the mapping and that each named test exists. It does not re-run them.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "settings.md"
SECTION = "## The reference's settings, key by key"

# The reference's Settings interface (packages/coding-agent/src/core/settings-manager.ts),
# nested objects spelled out key by key.
REFERENCE_KEYS = [
    "lastChangelogVersion",
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "modelThinkingLevels",
    "transport",
    "steeringMode",
    "followUpMode",
    "theme",
    "compaction.enabled",
    "compaction.reserveTokens",
    "compaction.keepRecentTokens",
    "compaction.modelOverrides",
    "branchSummary.reserveTokens",
    "branchSummary.skipPrompt",
    "retry.enabled",
    "retry.maxRetries",
    "retry.baseDelayMs",
    "retry.maxAgentDelayMs",
    "retry.provider.timeoutMs",
    "retry.provider.maxRetries",
    "retry.provider.maxRetryDelayMs",
    "hideThinkingBlock",
    "showCacheMissNotices",
    "externalEditor",
    "shellPath",
    "quietStartup",
    "defaultProjectTrust",
    "shellCommandPrefix",
    "npmCommand",
    "collapseChangelog",
    "enableInstallTelemetry",
    "enableAnalytics",
    "trackingId",
    "packages",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "enableSkillCommands",
    "terminal.showImages",
    "terminal.imageWidthCells",
    "terminal.clearOnShrink",
    "terminal.showTerminalProgress",
    "terminal.hyperlinks",
    "terminal.images",
    "terminal.trueColor",
    "images.autoResize",
    "images.blockImages",
    "enabledModels",
    "defaultTools",
    "doubleEscapeAction",
    "treeFilterMode",
    "thinkingBudgets",
    "editorPaddingX",
    "outputPad",
    "autocompleteMaxVisible",
    "showHardwareCursor",
    "markdown.codeBlockIndent",
    "markdown.mermaid",
    "warnings.anthropicExtraUsage",
    "sessionDir",
    "httpProxy",
    "httpIdleTimeoutMs",
    "websocketConnectTimeoutMs",
    "toolTimeoutMs",
    "tuiMode",
    "fullscreenExitOutput",
    "fullscreenScrollbar",
    "fullscreenCopyOnSelect",
]

STATUSES = {"honoured", "UI-only", "not applicable", "not yet"}

_HONOURED = "tests/agent/test_settings_honoured.py"
_E2E = "tests/agent/test_settings_keys_e2e.py"
_SWITCH = "tests/rpc/test_rpc_thinking_switch.py"
KEY_TESTS: dict[str, tuple[str, ...]] = {
    "defaultProvider": (f"{_E2E}::test_default_provider_and_model_choose_the_model",),
    "defaultModel": (
        f"{_E2E}::test_default_provider_and_model_choose_the_model",
        "tests/interactive/test_e2e_basics.py::test_model_switch_by_name_is_used_for_the_next_request",
    ),
    "defaultThinkingLevel": (
        f"{_HONOURED}::test_default_thinking_level_is_the_references_medium",
        f"{_HONOURED}::test_a_model_that_does_not_reason_starts_at_off",
        f"{_SWITCH}::test_default_thinking_level_applies_on_cycle",
    ),
    "modelThinkingLevels": (
        f"{_HONOURED}::test_model_thinking_levels_beat_the_default_and_lose_to_the_flag",
        f"{_SWITCH}::test_model_thinking_levels_apply_when_switching",
    ),
    "steeringMode": (
        "tests/agent/test_queues.py::test_steering_modes",
        "tests/interactive/test_e2e_commands.py::test_settings_change_is_saved_and_applied",
    ),
    "followUpMode": ("tests/agent/test_queues.py::test_follow_up_only_when_the_agent_would_stop",),
    "compaction.enabled": (
        "tests/compaction/test_triggers.py::test_disabled_automatic_compaction_leaves_overflows_and_thresholds_alone",
    ),
    "compaction.reserveTokens": (
        "tests/config/test_compaction_overrides.py::test_each_value_falls_back_on_its_own",
    ),
    "compaction.keepRecentTokens": (
        "tests/config/test_compaction_overrides.py::test_each_value_falls_back_on_its_own",
    ),
    "compaction.modelOverrides": (
        "tests/config/test_compaction_overrides.py::test_project_override_of_the_same_model_wins_field_by_field",
    ),
    "branchSummary.reserveTokens": (
        "tests/compaction/test_branch_summary.py::test_branch_summary_reserve_tokens_bound_what_is_summarized",
    ),
    "retry.enabled": (
        f"{_HONOURED}::test_provider_max_retries_default_and_permanent_errors_do_not_repeat",
    ),
    "retry.maxRetries": (f"{_E2E}::test_retry_max_retries_bounds_the_agents_retries",),
    "retry.baseDelayMs": ("tests/agent/test_json_mode.py::test_retry_on_429_and_529_with_events",),
    "retry.maxAgentDelayMs": (
        "tests/agent/test_retry_after_cap.py::test_retry_after_within_the_provider_limit_is_capped_by_max_agent_delay",
    ),
    "retry.provider.timeoutMs": (f"{_HONOURED}::test_provider_timeout_ms_bounds_the_request",),
    "retry.provider.maxRetries": (
        f"{_HONOURED}::test_provider_max_retries_repeat_the_request_inside_one_call",
    ),
    "retry.provider.maxRetryDelayMs": (
        "tests/agent/test_retry_after_cap.py::test_a_day_long_retry_after_fails_at_once_and_retries_on_the_capped_backoff",
    ),
    "shellPath": (
        "tests/rpc/test_rpc_bash_settings.py::test_shell_path_and_prefix_run_the_users_command",
        "tests/rpc/test_rpc_bash_settings.py::test_a_missing_shell_path_is_a_clear_error",
        "tests/tools/test_bash.py::test_custom_shell_path",
        "tests/interactive/test_e2e_shell_settings.py::test_a_missing_shell_path_is_a_notice",
    ),
    "shellCommandPrefix": (
        "tests/rpc/test_rpc_bash_settings.py::test_shell_path_and_prefix_run_the_users_command",
        "tests/rpc/test_rpc_bash_settings.py::test_a_prefix_with_set_e_stops_at_the_first_failure",
        "tests/interactive/test_e2e_shell_settings.py::test_bang_command_uses_the_prefix",
    ),
    "defaultProjectTrust": (
        "tests/config/test_project_trust.py::test_default_project_trust_always_from_global_settings",
        "tests/config/test_project_trust.py::test_default_project_trust_ask_or_never_does_not_trust",
    ),
    "packages": ("tests/packages/test_git_and_local.py::test_object_entries_filter_resources",),
    "extensions": ("tests/test_cli.py::test_a_disabled_extension_is_not_imported_by_the_cli",),
    "skills": (
        "tests/config/test_settings_loading.py::test_path_entries_for_other_resource_lists",
    ),
    "prompts": (
        "tests/config/test_settings_loading.py::test_path_entries_for_other_resource_lists",
    ),
    "themes": (
        "tests/themes/test_discovery.py::test_order_builtin_user_project_settings_packages_plugins",
    ),
    "enableSkillCommands": (
        "tests/resources/test_resources_e2e.py::test_enable_skill_commands_false_sends_the_text_unexpanded",
    ),
    "images.autoResize": (
        "tests/agent/test_images_auto_resize.py::test_an_attached_image_is_shrunk_and_the_model_told_its_size",
        "tests/agent/test_images_auto_resize.py::test_auto_resize_off_sends_the_original",
        "tests/rpc/test_rpc_prompting.py::test_a_large_rpc_image_is_shrunk_before_it_is_sent",
    ),
    "images.blockImages": (f"{_HONOURED}::test_block_images_sends_the_placeholder_instead",),
    "enabledModels": (
        "tests/rpc/test_rpc_enabled_models.py::test_cycle_model_follows_the_patterns_order_and_says_it_is_scoped",
        "tests/agent/test_models_flag.py::test_models_wins_over_enabled_models_and_model_over_both",
    ),
    "defaultTools": (f"{_E2E}::test_default_tools_choose_the_tools_sent",),
    "thinkingBudgets": (
        f"{_HONOURED}::test_thinking_budgets_set_the_anthropic_budget",
        "tests/agent/test_gemini_bedrock_e2e.py::test_gemini_round_trip",
    ),
    "sessionDir": (
        "tests/config/test_settings_loading.py::test_session_dir_of_a_trusted_project_wins",
        "tests/config/test_settings_loading.py::test_session_dir_falls_back_to_global_and_expands_tilde",
    ),
    "httpProxy": (f"{_E2E}::test_http_proxy_carries_the_provider_requests",),
    "httpIdleTimeoutMs": ("tests/llm/test_openai_stream.py::test_idle_timeout",),
    "toolTimeoutMs": ("tests/agent/test_tool_bounds.py::test_read_honours_the_tool_timeout",),
}


@cache
def table() -> dict[str, str]:
    """The docs table: key → status."""
    text = DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"{DOC} has no section {SECTION!r}"
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for match in re.finditer(r"^\| `([^`]+)` \| ([^|]+?) \|", body, re.MULTILINE):
        rows[match.group(1)] = match.group(2).strip()
    return rows


@cache
def functions_in(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )


def test_every_reference_key_has_a_row_and_no_row_is_extra() -> None:
    rows = table()
    assert [key for key in REFERENCE_KEYS if key not in rows] == []
    assert [key for key in rows if key not in REFERENCE_KEYS] == []
    assert {key: s for key, s in rows.items() if s not in STATUSES} == {}


@pytest.mark.parametrize("key", REFERENCE_KEYS)
def test_an_honoured_key_names_tests_that_exist(key: str) -> None:
    status = table().get(key)
    if status != "honoured":
        assert key not in KEY_TESTS, f"{key} is {status!r} in the docs but has tests listed"
        return
    assert KEY_TESTS.get(key), f"honoured key {key} has no test"
    for reference in KEY_TESTS[key]:
        path, name = reference.split("::")
        assert (ROOT / path).is_file(), reference
        assert name in functions_in(path), f"{reference}: no such test"
