"""The validated form of ``settings.json``: a pydantic model for every key knightcode reads.

Field names are snake_case in Python and camelCase in JSON (``retry.max_retries`` is
``retry.maxRetries``). Scalars are validated by the shared checks in
:mod:`knightcode._config.values` instead of pydantic's coercing defaults: a settings file that says
``"maxRetries": "3"`` or ``true`` is a mistake to report, not a value to guess at, and the message
should read like the rest of knightcode's errors rather than a pydantic dump.

Unknown top-level keys are kept (``model_extra``) so plugins can keep their settings in the same
file. This module imports pydantic; import it lazily (``Settings.model`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

from knightcode._config import values
from knightcode._config.values import InvalidSetting

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
ProjectTrust = Literal["ask", "always", "never"]
DoubleEscapeAction = Literal["tree", "fork", "none"]
TreeFilterMode = Literal["default", "no-tools", "user-only", "labeled-only", "all"]
DeliveryMode = Literal["all", "one-at-a-time"]
Transport = Literal["sse", "websocket", "websocket-cached", "auto"]

_ERROR_TYPE = "knightcode_setting"


def _checked(check: Callable[[object], str | None]) -> PlainValidator:
    """A pydantic validator that accepts exactly what ``check`` accepts, with its wording."""

    def validate(value: object) -> object:
        problem = check(value)
        if problem is not None:
            # The problem goes in through the context: it may contain braces (a described
            # object), which would break pydantic's message template.
            raise PydanticCustomError(_ERROR_TYPE, "{problem}", {"problem": problem})
        return value

    return PlainValidator(validate)


def _choice(literal: object) -> PlainValidator:
    """A validator for a ``Literal[...]`` type whose choices are taken from the type itself."""
    return _checked(partial(values.check_choice, choices=get_args(literal)))


def _int_range(low: int, high: int) -> PlainValidator:
    return _checked(partial(values.check_int_range, low=low, high=high))


Count = Annotated[int, _checked(values.check_non_negative_int)]
"""Tokens, retries, milliseconds: a non-negative safe integer."""
Flag = Annotated[bool, _checked(values.check_bool)]
Text = Annotated[str, _checked(values.check_str)]
TextList = Annotated[list[str], _checked(values.check_str_list)]
Packages = Annotated[list[str | dict[str, object]], _checked(values.check_packages)]


class Section(BaseModel):
    """Base of every settings object: camelCase JSON names, unknown keys kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class ThinkingBudgets(Section):
    """``thinkingBudgets``: token budgets per thinking level (provider default when unset)."""

    minimal: Count | None = None
    low: Count | None = None
    medium: Count | None = None
    high: Count | None = None


class CompactionSection(Section):
    """``compaction``; use :meth:`Settings.compaction_for` for the values of one model."""

    enabled: Flag = True
    reserve_tokens: Count = 16384
    keep_recent_tokens: Count = 20000
    # Entries must be objects; what is inside is checked only for the active model, on
    # resolution (see knightcode._config.compaction_settings).
    model_overrides: dict[str, dict[str, object]] = Field(default_factory=dict)


class BranchSummarySection(Section):
    """``branchSummary``: budgets for summarising an abandoned branch on ``/tree``."""

    reserve_tokens: Count = 16384
    skip_prompt: Flag = False


class ProviderRetrySection(Section):
    """``retry.provider``: retries done inside one provider request."""

    timeout_ms: Count | None = None
    max_retries: Count = 0
    max_retry_delay_ms: Count = 60000


class RetrySection(Section):
    """``retry``: agent-level retry of transient provider errors with exponential backoff."""

    enabled: Flag = True
    max_retries: Count = 3
    base_delay_ms: Count = 2000
    max_agent_delay_ms: Count = 60000
    provider: ProviderRetrySection = Field(default_factory=ProviderRetrySection)


class TerminalSection(Section):
    """``terminal``: how the interactive UI uses the terminal."""

    show_images: Flag = True
    image_width_cells: Count = 60
    clear_on_shrink: Flag = False


class ImagesSection(Section):
    """``images``: what happens to images sent to the model."""

    auto_resize: Flag = True
    block_images: Flag = False


class MarkdownSection(Section):
    """``markdown``: rendering of assistant markdown."""

    code_block_indent: Text = "  "


class SettingsModel(Section):
    """Every setting knightcode itself reads, with its default."""

    default_provider: Text | None = None
    default_model: Text | None = None
    default_thinking_level: Annotated[ThinkingLevel, _choice(ThinkingLevel)] | None = None
    model_thinking_levels: dict[str, Annotated[ThinkingLevel, _choice(ThinkingLevel)]] = Field(
        default_factory=dict
    )
    hide_thinking_block: Flag = False
    thinking_budgets: ThinkingBudgets = Field(default_factory=ThinkingBudgets)

    theme: Text = "dark"
    external_editor: Text | None = None
    quiet_startup: Flag = False
    default_project_trust: Annotated[ProjectTrust, _choice(ProjectTrust)] = "ask"
    collapse_changelog: Flag = False
    double_escape_action: Annotated[DoubleEscapeAction, _choice(DoubleEscapeAction)] = "tree"
    tree_filter_mode: Annotated[TreeFilterMode, _choice(TreeFilterMode)] = "default"
    editor_padding_x: Annotated[int, _int_range(0, 3)] = 0
    output_pad: Annotated[int, _int_range(0, 1)] = 1
    autocomplete_max_visible: Annotated[int, _int_range(3, 20)] = 5
    show_hardware_cursor: Flag = False
    http_proxy: Text | None = None

    compaction: CompactionSection = Field(default_factory=CompactionSection)
    branch_summary: BranchSummarySection = Field(default_factory=BranchSummarySection)
    retry: RetrySection = Field(default_factory=RetrySection)

    steering_mode: Annotated[DeliveryMode, _choice(DeliveryMode)] = "one-at-a-time"
    follow_up_mode: Annotated[DeliveryMode, _choice(DeliveryMode)] = "one-at-a-time"
    transport: Annotated[Transport, _choice(Transport)] = "auto"
    http_idle_timeout_ms: Count = 300000
    tool_timeout_ms: Count = 180000

    terminal: TerminalSection = Field(default_factory=TerminalSection)
    images: ImagesSection = Field(default_factory=ImagesSection)
    shell_path: Text | None = None
    shell_command_prefix: Text | None = None
    default_tools: TextList | None = None
    session_dir: Text | None = None
    enabled_models: TextList | None = None
    markdown: MarkdownSection = Field(default_factory=MarkdownSection)

    packages: Packages = Field(default_factory=list)
    extensions: TextList = Field(default_factory=list)
    skills: TextList = Field(default_factory=list)
    prompts: TextList = Field(default_factory=list)
    themes: TextList = Field(default_factory=list)
    enable_skill_commands: Flag = True


def _problem_of(error: ErrorDetails) -> str:
    """The wording for one pydantic error: ours for our checks, plain English for structure."""
    kind = error["type"]
    if kind == _ERROR_TYPE:
        return str(error["ctx"]["problem"])
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected an object, got {values.describe(error.get('input'))}"
    return str(error["msg"])


def parse_settings(data: Mapping[str, object]) -> SettingsModel:
    """Validate merged settings data.

    :raises InvalidSetting: for the first bad value, with its JSON key path
    """
    try:
        return SettingsModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise InvalidSetting(first["loc"], _problem_of(first)) from None
