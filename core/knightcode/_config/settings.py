"""The validated form of ``settings.json``: a field for every key knightcode reads.

Attributes are snake_case in Python and keys camelCase in JSON (``retry.max_retries`` is
``retry.maxRetries``). Values are judged by the shared checks in :mod:`knightcode._config.values`,
with no coercion: a settings file that says ``"maxRetries": "3"`` or ``true`` is a mistake to
report, not a value to guess at.

Unknown keys are kept (``extra``) so plugins can keep their settings in the same file. The
tables are declared with :mod:`knightcode._config.schema` rather than pydantic, for start-up time
(see there); ``Settings.model`` still imports this module only when first used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Literal, get_args

from knightcode._config import values
from knightcode._config.schema import Checked, Field, MapOf, Section, Spec, nested, nullable

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
ProjectTrust = Literal["ask", "always", "never"]
DoubleEscapeAction = Literal["tree", "fork", "none"]
TreeFilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
DeliveryMode = Literal["all", "one-at-a-time"]
Transport = Literal["sse", "websocket", "websocket-cached", "auto"]
OutsideWorkspace = Literal["allow", "ask", "refuse"]


def _one_of(literal: object) -> Callable[[object], str | None]:
    """The check for a ``Literal[...]`` type, its choices taken from the type itself."""
    return partial(values.check_choice, choices=get_args(literal))


def _int_range(low: int, high: int) -> Spec[int]:
    return Checked(partial(values.check_int_range, low=low, high=high))


COUNT: Spec[int] = Checked(values.check_non_negative_int)
"""Tokens, retries, milliseconds: a non-negative safe integer."""
FLAG: Spec[bool] = Checked(values.check_bool)
TEXT: Spec[str] = Checked(values.check_str)
TEXT_LIST: Spec[list[str]] = Checked(values.check_str_list)
PACKAGES: Spec[list[str | dict[str, object]]] = Checked(values.check_packages)
OBJECT: Spec[dict[str, object]] = Checked(values.check_object)
THINKING_LEVEL: Spec[ThinkingLevel] = Checked(_one_of(ThinkingLevel))
DELIVERY_MODE: Spec[DeliveryMode] = Checked(_one_of(DeliveryMode))


class ThinkingBudgets(Section):
    """``thinkingBudgets``: token budgets per thinking level (provider default when unset)."""

    minimal = Field("minimal", nullable(COUNT), None)
    low = Field("low", nullable(COUNT), None)
    medium = Field("medium", nullable(COUNT), None)
    high = Field("high", nullable(COUNT), None)


class CompactionSection(Section):
    """``compaction``; use :meth:`Settings.compaction_for` for the values of one model."""

    enabled = Field("enabled", FLAG, True)
    reserve_tokens = Field("reserveTokens", COUNT, 16384)
    keep_recent_tokens = Field("keepRecentTokens", COUNT, 20000)
    # Entries must be objects; what is inside is checked only for the active model, on
    # resolution (see knightcode._config.compaction_settings).
    model_overrides = Field("modelOverrides", MapOf(OBJECT), factory=dict)


class BranchSummarySection(Section):
    """``branchSummary``: budgets for summarising an abandoned branch on ``/tree``."""

    reserve_tokens = Field("reserveTokens", COUNT, 16384)
    skip_prompt = Field("skipPrompt", FLAG, False)


class ProviderRetrySection(Section):
    """``retry.provider``: retries done inside one provider request."""

    timeout_ms = Field("timeoutMs", nullable(COUNT), None)
    max_retries = Field("maxRetries", COUNT, 0)
    max_retry_delay_ms = Field("maxRetryDelayMs", COUNT, 60000)


class RetrySection(Section):
    """``retry``: agent-level retry of transient provider errors with exponential backoff."""

    enabled = Field("enabled", FLAG, True)
    max_retries = Field("maxRetries", COUNT, 3)
    base_delay_ms = Field("baseDelayMs", COUNT, 2000)
    max_agent_delay_ms = Field("maxAgentDelayMs", COUNT, 60000)
    provider = nested("provider", ProviderRetrySection)


class TerminalSection(Section):
    """``terminal``: how the interactive UI uses the terminal."""

    show_images = Field("showImages", FLAG, True)
    image_width_cells = Field("imageWidthCells", COUNT, 60)
    clear_on_shrink = Field("clearOnShrink", FLAG, False)


class ImagesSection(Section):
    """``images``: what happens to images sent to the model."""

    auto_resize = Field("autoResize", FLAG, True)
    block_images = Field("blockImages", FLAG, False)


class ToolsSection(Section):
    """``tools``: limits on what the built-in tools may touch."""

    outside_workspace = Field(
        "outsideWorkspace", Checked[OutsideWorkspace](_one_of(OutsideWorkspace)), "allow"
    )
    enabled = Field("enabled", MapOf(FLAG), factory=dict)
    """Tool name -> on/off for new sessions, over ``defaultTools`` and the plugin tools'
    default (on); ``--tools`` wins. Written by ``/tools`` and ``knightcode tools enable``."""


class MarkdownSection(Section):
    """``markdown``: rendering of assistant markdown."""

    code_block_indent = Field("codeBlockIndent", TEXT, "  ")


class SettingsModel(Section):
    """Every setting knightcode itself reads, with its default (checked in this order)."""

    default_provider = Field("defaultProvider", nullable(TEXT), None)
    default_model = Field("defaultModel", nullable(TEXT), None)
    default_thinking_level = Field("defaultThinkingLevel", nullable(THINKING_LEVEL), None)
    model_thinking_levels = Field("modelThinkingLevels", MapOf(THINKING_LEVEL), factory=dict)
    hide_thinking_block = Field("hideThinkingBlock", FLAG, False)
    thinking_budgets = nested("thinkingBudgets", ThinkingBudgets)

    theme = Field("theme", TEXT, "dark")
    external_editor = Field("externalEditor", nullable(TEXT), None)
    quiet_startup = Field("quietStartup", FLAG, False)
    fullscreen = Field("fullscreen", FLAG, False)
    """Interactive mode starts in the alternate screen (``--fullscreen``; ``/fullscreen``)."""
    fullscreen_copy_on_select = Field("fullscreenCopyOnSelect", FLAG, True)
    """Fullscreen: a mouse selection of the transcript is copied when the button is released."""
    auto_reload = Field("autoReload", FLAG, False)
    """Interactive mode: reload (as ``/reload``) when extensions, skills, prompt templates,
    mcp.json or settings change on disk."""
    default_project_trust = Field(
        "defaultProjectTrust", Checked[ProjectTrust](_one_of(ProjectTrust)), "ask"
    )
    collapse_changelog = Field("collapseChangelog", FLAG, False)
    double_escape_action = Field(
        "doubleEscapeAction", Checked[DoubleEscapeAction](_one_of(DoubleEscapeAction)), "tree"
    )
    tree_filter_mode = Field(
        "treeFilterMode", Checked[TreeFilterMode](_one_of(TreeFilterMode)), "default"
    )
    editor_padding_x = Field("editorPaddingX", _int_range(0, 3), 0)
    output_pad = Field("outputPad", _int_range(0, 1), 1)
    autocomplete_max_visible = Field("autocompleteMaxVisible", _int_range(3, 20), 5)
    show_hardware_cursor = Field("showHardwareCursor", FLAG, False)
    http_proxy = Field("httpProxy", nullable(TEXT), None)

    compaction = nested("compaction", CompactionSection)
    branch_summary = nested("branchSummary", BranchSummarySection)
    retry = nested("retry", RetrySection)

    steering_mode = Field("steeringMode", DELIVERY_MODE, "one-at-a-time")
    follow_up_mode = Field("followUpMode", DELIVERY_MODE, "one-at-a-time")
    transport = Field("transport", Checked[Transport](_one_of(Transport)), "auto")
    http_idle_timeout_ms = Field("httpIdleTimeoutMs", COUNT, 300000)
    tool_timeout_ms = Field("toolTimeoutMs", COUNT, 180000)
    tools = nested("tools", ToolsSection)
    hook_timeout_ms = Field("hookTimeoutMs", COUNT, 60000)

    terminal = nested("terminal", TerminalSection)
    images = nested("images", ImagesSection)
    shell_path = Field("shellPath", nullable(TEXT), None)
    shell_command_prefix = Field("shellCommandPrefix", nullable(TEXT), None)
    default_tools = Field("defaultTools", nullable(TEXT_LIST), None)
    session_dir = Field("sessionDir", nullable(TEXT), None)
    enabled_models = Field("enabledModels", nullable(TEXT_LIST), None)
    markdown = nested("markdown", MarkdownSection)

    packages = Field("packages", PACKAGES, factory=list)
    extensions = Field("extensions", TEXT_LIST, factory=list)
    skills = Field("skills", TEXT_LIST, factory=list)
    prompts = Field("prompts", TEXT_LIST, factory=list)
    themes = Field("themes", TEXT_LIST, factory=list)
    enable_skill_commands = Field("enableSkillCommands", FLAG, True)


def parse_settings(data: Mapping[str, object]) -> SettingsModel:
    """Validate merged settings data.

    :raises InvalidSetting: for the first bad value, with its JSON key path
    """
    return SettingsModel.parse(data)
