"""knightcode: a plugin-first coding agent for the terminal.

This module is the public API — for plugins and for programs that embed knightcode — together with
:mod:`knightcode.testing` (a scripted model server for tests) and :mod:`knightcode.rpc` (a client
for RPC mode). Everything else is private: modules whose names start with ``_`` may change without
notice. Names are imported on first use, so ``import knightcode`` stays cheap (a plugin that only
needs :data:`hookimpl` does not pay for the model clients).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from knightcode._version import __version__

if TYPE_CHECKING:
    # ``name as name``: explicitly re-exported for type checkers (``__all__`` is built below).
    from knightcode._abort import (
        Aborted as Aborted,
    )
    from knightcode._abort import (
        AbortSignal as AbortSignal,
    )
    from knightcode._agent.retry import RetrySettings as RetrySettings
    from knightcode._config.compaction_settings import CompactionSettings as CompactionSettings
    from knightcode._config.loading import Settings as Settings
    from knightcode._errors import (
        ConfigError as ConfigError,
    )
    from knightcode._errors import (
        KnightcodeError as KnightcodeError,
    )
    from knightcode._errors import (
        PluginError as PluginError,
    )
    from knightcode._errors import (
        SettingsError as SettingsError,
    )
    from knightcode._errors import (
        UsageError as UsageError,
    )
    from knightcode._llm.classify import (
        Answer as Answer,
    )
    from knightcode._llm.classify import (
        BoolAnswer as BoolAnswer,
    )
    from knightcode._llm.classify import (
        BoolQuestion as BoolQuestion,
    )
    from knightcode._llm.classify import (
        ChoiceAnswer as ChoiceAnswer,
    )
    from knightcode._llm.classify import (
        ChoiceQuestion as ChoiceQuestion,
    )
    from knightcode._llm.classify import (
        Classification as Classification,
    )
    from knightcode._llm.classify import (
        ClassificationError as ClassificationError,
    )
    from knightcode._llm.classify import (
        ClassifyRequest as ClassifyRequest,
    )
    from knightcode._llm.classify import (
        Question as Question,
    )
    from knightcode._llm.classify import (
        ScoreAnswer as ScoreAnswer,
    )
    from knightcode._llm.classify import (
        ScoreQuestion as ScoreQuestion,
    )
    from knightcode._llm.classify import (
        answer_from_probabilities as answer_from_probabilities,
    )
    from knightcode._llm.discovery import (
        DiscoveredModels as DiscoveredModels,
    )
    from knightcode._llm.discovery import (
        DiscoveryError as DiscoveryError,
    )
    from knightcode._llm.discovery import (
        ProviderAccess as ProviderAccess,
    )
    from knightcode._llm.errors import (
        backoff_delay_ms as backoff_delay_ms,
    )
    from knightcode._llm.errors import (
        is_context_overflow as is_context_overflow,
    )
    from knightcode._llm.errors import (
        is_retryable as is_retryable,
    )
    from knightcode._llm.keys import AuthStorage as AuthStorage
    from knightcode._llm.openai_completions import (
        stream_openai_completions as stream_openai_completions,
    )
    from knightcode._llm.registry import ModelRegistry as ModelRegistry
    from knightcode._llm.summary import (
        MIN_SUMMARY_TOKENS as MIN_SUMMARY_TOKENS,
    )
    from knightcode._llm.summary import (
        SUMMARIZATION_SYSTEM_PROMPT as SUMMARIZATION_SYSTEM_PROMPT,
    )
    from knightcode._llm.summary import (
        UPDATE_PROMPT as UPDATE_PROMPT,
    )
    from knightcode._llm.summary import (
        SummarizationAborted as SummarizationAborted,
    )
    from knightcode._llm.summary import (
        SummarizationError as SummarizationError,
    )
    from knightcode._llm.summary import (
        SummaryResult as SummaryResult,
    )
    from knightcode._llm.summary import (
        build_summary_prompt as build_summary_prompt,
    )
    from knightcode._llm.summary import (
        estimate_request_tokens as estimate_request_tokens,
    )
    from knightcode._llm.summary import (
        generate_summary as generate_summary,
    )
    from knightcode._llm.summary import (
        generate_summary_with_usage as generate_summary_with_usage,
    )
    from knightcode._llm.summary import (
        output_budget as output_budget,
    )
    from knightcode._llm.summary import (
        request_summary as request_summary,
    )
    from knightcode._llm.types import (
        Context as Context,
    )
    from knightcode._llm.types import (
        Model as Model,
    )
    from knightcode._llm.types import (
        ModelCost as ModelCost,
    )
    from knightcode._llm.types import (
        StreamOptions as StreamOptions,
    )
    from knightcode._llm.types import (
        Tool as Tool,
    )
    from knightcode._llm.types import (
        calculate_cost as calculate_cost,
    )
    from knightcode._llm.types import (
        new_assistant_message as new_assistant_message,
    )
    from knightcode._markers import (
        hookimpl as hookimpl,
    )
    from knightcode._markers import (
        hookspec as hookspec,
    )
    from knightcode._plugins.combine import Rule as Rule
    from knightcode._plugins.context import (
        ExtensionUI as ExtensionUI,
    )
    from knightcode._plugins.context import (
        FlagValue as FlagValue,
    )
    from knightcode._plugins.context import (
        FlagValues as FlagValues,
    )
    from knightcode._plugins.context import (
        HeadlessUI as HeadlessUI,
    )
    from knightcode._plugins.context import (
        HookContext as HookContext,
    )
    from knightcode._plugins.context import (
        NoSessionError as NoSessionError,
    )
    from knightcode._plugins.context import (
        NotifyLevel as NotifyLevel,
    )
    from knightcode._plugins.definitions import (
        CommandDefinition as CommandDefinition,
    )
    from knightcode._plugins.definitions import (
        CommandHandler as CommandHandler,
    )
    from knightcode._plugins.definitions import (
        FlagDefinition as FlagDefinition,
    )
    from knightcode._plugins.definitions import (
        OnUpdate as OnUpdate,
    )
    from knightcode._plugins.definitions import (
        ProviderDefinition as ProviderDefinition,
    )
    from knightcode._plugins.definitions import (
        ShortcutDefinition as ShortcutDefinition,
    )
    from knightcode._plugins.definitions import (
        ToolDefinition as ToolDefinition,
    )
    from knightcode._plugins.definitions import (
        ToolExecute as ToolExecute,
    )
    from knightcode._plugins.handles import (
        AgentHandle as AgentHandle,
    )
    from knightcode._plugins.handles import (
        ForkOutcome as ForkOutcome,
    )
    from knightcode._plugins.handles import (
        SessionView as SessionView,
    )
    from knightcode._plugins.handles import (
        TreeOutcome as TreeOutcome,
    )
    from knightcode._plugins.hooks import (
        AgentStartOutcome as AgentStartOutcome,
    )
    from knightcode._plugins.hooks import (
        Hooks as Hooks,
    )
    from knightcode._plugins.hooks import (
        InputOutcome as InputOutcome,
    )
    from knightcode._plugins.host import (
        PluginFailure as PluginFailure,
    )
    from knightcode._plugins.host import (
        PluginHost as PluginHost,
    )
    from knightcode._plugins.planning import (
        HostOptions as HostOptions,
    )
    from knightcode._plugins.planning import (
        create_plugin_host as create_plugin_host,
    )
    from knightcode._plugins.preparations import (
        BranchSummarizer as BranchSummarizer,
    )
    from knightcode._plugins.preparations import (
        CompactionPreparation as CompactionPreparation,
    )
    from knightcode._plugins.preparations import (
        FileOperations as FileOperations,
    )
    from knightcode._plugins.preparations import (
        TreePreparation as TreePreparation,
    )
    from knightcode._plugins.records import (
        PluginKind as PluginKind,
    )
    from knightcode._plugins.records import (
        PluginRecord as PluginRecord,
    )
    from knightcode._plugins.records import (
        PluginStatus as PluginStatus,
    )
    from knightcode._plugins.reload import (
        ReloadReport as ReloadReport,
    )
    from knightcode._plugins.reload import (
        reload_extensions as reload_extensions,
    )
    from knightcode._plugins.reload import (
        watch as watch,
    )
    from knightcode._plugins.results import (
        UNCHANGED as UNCHANGED,
    )
    from knightcode._plugins.results import (
        AgentStartChanges as AgentStartChanges,
    )
    from knightcode._plugins.results import (
        BashAnswer as BashAnswer,
    )
    from knightcode._plugins.results import (
        Block as Block,
    )
    from knightcode._plugins.results import (
        BranchSummary as BranchSummary,
    )
    from knightcode._plugins.results import (
        Cancel as Cancel,
    )
    from knightcode._plugins.results import (
        CompactionOverride as CompactionOverride,
    )
    from knightcode._plugins.results import (
        CompactionVerdict as CompactionVerdict,
    )
    from knightcode._plugins.results import (
        ForkOptions as ForkOptions,
    )
    from knightcode._plugins.results import (
        Handled as Handled,
    )
    from knightcode._plugins.results import (
        PluginMessage as PluginMessage,
    )
    from knightcode._plugins.results import (
        Resources as Resources,
    )
    from knightcode._plugins.results import (
        RunInBackend as RunInBackend,
    )
    from knightcode._plugins.results import (
        ToolResultPatch as ToolResultPatch,
    )
    from knightcode._plugins.results import (
        Transform as Transform,
    )
    from knightcode._plugins.results import (
        TreeNavigationOptions as TreeNavigationOptions,
    )
    from knightcode._session.context import (
        SessionContext as SessionContext,
    )
    from knightcode._session.context import (
        build_session_context as build_session_context,
    )
    from knightcode._session.messages import (
        content_text as content_text,
    )
    from knightcode._session.messages import (
        convert_to_llm as convert_to_llm,
    )
    from knightcode._session.messages import (
        create_branch_summary_message as create_branch_summary_message,
    )
    from knightcode._session.messages import (
        create_compaction_summary_message as create_compaction_summary_message,
    )
    from knightcode._session.messages import (
        create_custom_message as create_custom_message,
    )
    from knightcode._session.projection import (
        SessionProjection as SessionProjection,
    )
    from knightcode._session.projection import (
        project_path as project_path,
    )
    from knightcode._session.serialization import serialize_conversation as serialize_conversation
    from knightcode._session.tokens import (
        estimate_context_tokens as estimate_context_tokens,
    )
    from knightcode._session.tokens import (
        estimate_text_tokens as estimate_text_tokens,
    )
    from knightcode._session.tokens import (
        estimate_tokens as estimate_tokens,
    )
    from knightcode._tools.backend import (
        DirEntry as DirEntry,
    )
    from knightcode._tools.backend import (
        ExecResult as ExecResult,
    )
    from knightcode._tools.backend import (
        ExecutionBackend as ExecutionBackend,
    )
    from knightcode._tools.backend import (
        FileInfo as FileInfo,
    )
    from knightcode._tools.context import ToolContext as ToolContext
    from knightcode._tools.local_backend import LocalBackend as LocalBackend
    from knightcode._types.entries import (
        CONTEXT_ENTRY_TYPES as CONTEXT_ENTRY_TYPES,
    )
    from knightcode._types.entries import (
        CURRENT_SESSION_VERSION as CURRENT_SESSION_VERSION,
    )
    from knightcode._types.entries import (
        ENTRY_TYPES as ENTRY_TYPES,
    )
    from knightcode._types.entries import (
        BranchSummaryEntry as BranchSummaryEntry,
    )
    from knightcode._types.entries import (
        CompactionEntry as CompactionEntry,
    )
    from knightcode._types.entries import (
        ContextEdit as ContextEdit,
    )
    from knightcode._types.entries import (
        ContextEditEntry as ContextEditEntry,
    )
    from knightcode._types.entries import (
        CustomEntry as CustomEntry,
    )
    from knightcode._types.entries import (
        CustomMessageEntry as CustomMessageEntry,
    )
    from knightcode._types.entries import (
        FileEntry as FileEntry,
    )
    from knightcode._types.entries import (
        LabelEntry as LabelEntry,
    )
    from knightcode._types.entries import (
        MessageEntry as MessageEntry,
    )
    from knightcode._types.entries import (
        ModelChangeEntry as ModelChangeEntry,
    )
    from knightcode._types.entries import (
        OmitEdit as OmitEdit,
    )
    from knightcode._types.entries import (
        ReplaceEdit as ReplaceEdit,
    )
    from knightcode._types.entries import (
        SessionEntry as SessionEntry,
    )
    from knightcode._types.entries import (
        SessionHeader as SessionHeader,
    )
    from knightcode._types.entries import (
        SessionInfoEntry as SessionInfoEntry,
    )
    from knightcode._types.entries import (
        ThinkingLevelChangeEntry as ThinkingLevelChangeEntry,
    )
    from knightcode._types.entries import (
        make_header as make_header,
    )
    from knightcode._types.events import (
        AgentEndEvent as AgentEndEvent,
    )
    from knightcode._types.events import (
        AgentEvent as AgentEvent,
    )
    from knightcode._types.events import (
        AgentSettledEvent as AgentSettledEvent,
    )
    from knightcode._types.events import (
        AgentStartEvent as AgentStartEvent,
    )
    from knightcode._types.events import (
        AutoRetryEndEvent as AutoRetryEndEvent,
    )
    from knightcode._types.events import (
        AutoRetryStartEvent as AutoRetryStartEvent,
    )
    from knightcode._types.events import (
        CompactionEndEvent as CompactionEndEvent,
    )
    from knightcode._types.events import (
        CompactionReason as CompactionReason,
    )
    from knightcode._types.events import (
        CompactionResult as CompactionResult,
    )
    from knightcode._types.events import (
        CompactionStartEvent as CompactionStartEvent,
    )
    from knightcode._types.events import (
        EntryAppendedEvent as EntryAppendedEvent,
    )
    from knightcode._types.events import (
        MessageEndEvent as MessageEndEvent,
    )
    from knightcode._types.events import (
        MessageStartEvent as MessageStartEvent,
    )
    from knightcode._types.events import (
        MessageUpdateEvent as MessageUpdateEvent,
    )
    from knightcode._types.events import (
        QueueUpdateEvent as QueueUpdateEvent,
    )
    from knightcode._types.events import (
        SessionEvent as SessionEvent,
    )
    from knightcode._types.events import (
        SessionInfoChangedEvent as SessionInfoChangedEvent,
    )
    from knightcode._types.events import (
        SummarizationRetryAttemptStartEvent as SummarizationRetryAttemptStartEvent,
    )
    from knightcode._types.events import (
        SummarizationRetryFinishedEvent as SummarizationRetryFinishedEvent,
    )
    from knightcode._types.events import (
        SummarizationRetryScheduledEvent as SummarizationRetryScheduledEvent,
    )
    from knightcode._types.events import (
        ThinkingLevelChangedEvent as ThinkingLevelChangedEvent,
    )
    from knightcode._types.events import (
        ToolExecutionEndEvent as ToolExecutionEndEvent,
    )
    from knightcode._types.events import (
        ToolExecutionStartEvent as ToolExecutionStartEvent,
    )
    from knightcode._types.events import (
        ToolExecutionUpdateEvent as ToolExecutionUpdateEvent,
    )
    from knightcode._types.events import (
        TurnEndEvent as TurnEndEvent,
    )
    from knightcode._types.events import (
        TurnStartEvent as TurnStartEvent,
    )
    from knightcode._types.messages import (
        THINKING_LEVELS as THINKING_LEVELS,
    )
    from knightcode._types.messages import (
        AgentMessage as AgentMessage,
    )
    from knightcode._types.messages import (
        AssistantContent as AssistantContent,
    )
    from knightcode._types.messages import (
        AssistantMessage as AssistantMessage,
    )
    from knightcode._types.messages import (
        BashExecutionMessage as BashExecutionMessage,
    )
    from knightcode._types.messages import (
        BranchSummaryMessage as BranchSummaryMessage,
    )
    from knightcode._types.messages import (
        CompactionSummaryMessage as CompactionSummaryMessage,
    )
    from knightcode._types.messages import (
        ContentBlock as ContentBlock,
    )
    from knightcode._types.messages import (
        Cost as Cost,
    )
    from knightcode._types.messages import (
        CustomMessage as CustomMessage,
    )
    from knightcode._types.messages import (
        ImageContent as ImageContent,
    )
    from knightcode._types.messages import (
        LlmMessage as LlmMessage,
    )
    from knightcode._types.messages import (
        StopReason as StopReason,
    )
    from knightcode._types.messages import (
        TextContent as TextContent,
    )
    from knightcode._types.messages import (
        ThinkingContent as ThinkingContent,
    )
    from knightcode._types.messages import (
        ThinkingLevel as ThinkingLevel,
    )
    from knightcode._types.messages import (
        ToolCall as ToolCall,
    )
    from knightcode._types.messages import (
        ToolResult as ToolResult,
    )
    from knightcode._types.messages import (
        ToolResultContent as ToolResultContent,
    )
    from knightcode._types.messages import (
        ToolResultMessage as ToolResultMessage,
    )
    from knightcode._types.messages import (
        Usage as Usage,
    )
    from knightcode._types.messages import (
        UserContent as UserContent,
    )
    from knightcode._types.messages import (
        UserMessage as UserMessage,
    )
    from knightcode._types.messages import (
        thinking_level_of as thinking_level_of,
    )
    from knightcode._types.stream import (
        AssistantMessageEvent as AssistantMessageEvent,
    )
    from knightcode._types.stream import (
        DoneEvent as DoneEvent,
    )
    from knightcode._types.stream import (
        ErrorEvent as ErrorEvent,
    )
    from knightcode._types.stream import (
        StartEvent as StartEvent,
    )
    from knightcode._types.stream import (
        TextDeltaEvent as TextDeltaEvent,
    )
    from knightcode._types.stream import (
        TextEndEvent as TextEndEvent,
    )
    from knightcode._types.stream import (
        TextStartEvent as TextStartEvent,
    )
    from knightcode._types.stream import (
        ThinkingDeltaEvent as ThinkingDeltaEvent,
    )
    from knightcode._types.stream import (
        ThinkingEndEvent as ThinkingEndEvent,
    )
    from knightcode._types.stream import (
        ThinkingStartEvent as ThinkingStartEvent,
    )
    from knightcode._types.stream import (
        ToolCallDeltaEvent as ToolCallDeltaEvent,
    )
    from knightcode._types.stream import (
        ToolCallEndEvent as ToolCallEndEvent,
    )
    from knightcode._types.stream import (
        ToolCallStartEvent as ToolCallStartEvent,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "knightcode._markers": (
        "hookimpl",
        "hookspec",
    ),
    "knightcode._errors": (
        "ConfigError",
        "KnightcodeError",
        "PluginError",
        "SettingsError",
        "UsageError",
    ),
    "knightcode._abort": (
        "AbortSignal",
        "Aborted",
    ),
    "knightcode._plugins.context": (
        "ExtensionUI",
        "FlagValue",
        "FlagValues",
        "HeadlessUI",
        "HookContext",
        "NoSessionError",
        "NotifyLevel",
    ),
    "knightcode._plugins.handles": (
        "AgentHandle",
        "ForkOutcome",
        "SessionView",
        "TreeOutcome",
    ),
    "knightcode._plugins.hooks": (
        "AgentStartOutcome",
        "Hooks",
        "InputOutcome",
    ),
    "knightcode._plugins.results": (
        "UNCHANGED",
        "AgentStartChanges",
        "BashAnswer",
        "Block",
        "BranchSummary",
        "Cancel",
        "CompactionOverride",
        "CompactionVerdict",
        "ForkOptions",
        "Handled",
        "PluginMessage",
        "Resources",
        "RunInBackend",
        "ToolResultPatch",
        "Transform",
        "TreeNavigationOptions",
    ),
    "knightcode._plugins.preparations": (
        "BranchSummarizer",
        "CompactionPreparation",
        "FileOperations",
        "TreePreparation",
    ),
    "knightcode._plugins.definitions": (
        "CommandDefinition",
        "CommandHandler",
        "FlagDefinition",
        "OnUpdate",
        "ProviderDefinition",
        "ShortcutDefinition",
        "ToolDefinition",
        "ToolExecute",
    ),
    "knightcode._plugins.combine": ("Rule",),
    "knightcode._plugins.host": (
        "PluginFailure",
        "PluginHost",
    ),
    "knightcode._plugins.planning": (
        "HostOptions",
        "create_plugin_host",
    ),
    "knightcode._plugins.records": (
        "PluginKind",
        "PluginRecord",
        "PluginStatus",
    ),
    "knightcode._plugins.reload": (
        "ReloadReport",
        "reload_extensions",
        "watch",
    ),
    "knightcode._tools.context": ("ToolContext",),
    "knightcode._tools.backend": (
        "DirEntry",
        "ExecResult",
        "ExecutionBackend",
        "FileInfo",
    ),
    "knightcode._tools.local_backend": ("LocalBackend",),
    "knightcode._config.loading": ("Settings",),
    "knightcode._config.compaction_settings": ("CompactionSettings",),
    "knightcode._agent.retry": ("RetrySettings",),
    "knightcode._types.messages": (
        "THINKING_LEVELS",
        "AgentMessage",
        "AssistantContent",
        "AssistantMessage",
        "BashExecutionMessage",
        "BranchSummaryMessage",
        "CompactionSummaryMessage",
        "ContentBlock",
        "Cost",
        "CustomMessage",
        "ImageContent",
        "LlmMessage",
        "StopReason",
        "TextContent",
        "ThinkingContent",
        "ThinkingLevel",
        "ToolCall",
        "ToolResult",
        "ToolResultContent",
        "ToolResultMessage",
        "Usage",
        "UserContent",
        "UserMessage",
        "thinking_level_of",
    ),
    "knightcode._types.entries": (
        "CONTEXT_ENTRY_TYPES",
        "CURRENT_SESSION_VERSION",
        "ENTRY_TYPES",
        "BranchSummaryEntry",
        "CompactionEntry",
        "ContextEdit",
        "ContextEditEntry",
        "CustomEntry",
        "CustomMessageEntry",
        "FileEntry",
        "LabelEntry",
        "MessageEntry",
        "ModelChangeEntry",
        "OmitEdit",
        "ReplaceEdit",
        "SessionEntry",
        "SessionHeader",
        "SessionInfoEntry",
        "ThinkingLevelChangeEntry",
        "make_header",
    ),
    "knightcode._types.stream": (
        "AssistantMessageEvent",
        "DoneEvent",
        "ErrorEvent",
        "StartEvent",
        "TextDeltaEvent",
        "TextEndEvent",
        "TextStartEvent",
        "ThinkingDeltaEvent",
        "ThinkingEndEvent",
        "ThinkingStartEvent",
        "ToolCallDeltaEvent",
        "ToolCallEndEvent",
        "ToolCallStartEvent",
    ),
    "knightcode._types.events": (
        "AgentEndEvent",
        "AgentEvent",
        "AgentSettledEvent",
        "AgentStartEvent",
        "AutoRetryEndEvent",
        "AutoRetryStartEvent",
        "CompactionEndEvent",
        "CompactionReason",
        "CompactionResult",
        "CompactionStartEvent",
        "EntryAppendedEvent",
        "MessageEndEvent",
        "MessageStartEvent",
        "MessageUpdateEvent",
        "QueueUpdateEvent",
        "SessionEvent",
        "SessionInfoChangedEvent",
        "SummarizationRetryAttemptStartEvent",
        "SummarizationRetryFinishedEvent",
        "SummarizationRetryScheduledEvent",
        "ThinkingLevelChangedEvent",
        "ToolExecutionEndEvent",
        "ToolExecutionStartEvent",
        "ToolExecutionUpdateEvent",
        "TurnEndEvent",
        "TurnStartEvent",
    ),
    "knightcode._llm.types": (
        "Context",
        "Model",
        "ModelCost",
        "StreamOptions",
        "Tool",
        "calculate_cost",
        "new_assistant_message",
    ),
    "knightcode._llm.registry": ("ModelRegistry",),
    "knightcode._llm.discovery": (
        "DiscoveredModels",
        "DiscoveryError",
        "ProviderAccess",
    ),
    "knightcode._llm.classify": (
        "Answer",
        "BoolAnswer",
        "BoolQuestion",
        "ChoiceAnswer",
        "ChoiceQuestion",
        "Classification",
        "ClassificationError",
        "ClassifyRequest",
        "Question",
        "ScoreAnswer",
        "ScoreQuestion",
        "answer_from_probabilities",
    ),
    "knightcode._llm.errors": (
        "backoff_delay_ms",
        "is_context_overflow",
        "is_retryable",
    ),
    "knightcode._llm.keys": ("AuthStorage",),
    "knightcode._llm.openai_completions": ("stream_openai_completions",),
    "knightcode._llm.summary": (
        "MIN_SUMMARY_TOKENS",
        "SUMMARIZATION_SYSTEM_PROMPT",
        "UPDATE_PROMPT",
        "SummarizationAborted",
        "SummarizationError",
        "SummaryResult",
        "build_summary_prompt",
        "estimate_request_tokens",
        "generate_summary",
        "generate_summary_with_usage",
        "output_budget",
        "request_summary",
    ),
    "knightcode._session.messages": (
        "content_text",
        "convert_to_llm",
        "create_branch_summary_message",
        "create_compaction_summary_message",
        "create_custom_message",
    ),
    "knightcode._session.serialization": ("serialize_conversation",),
    "knightcode._session.tokens": (
        "estimate_context_tokens",
        "estimate_text_tokens",
        "estimate_tokens",
    ),
    "knightcode._session.context": (
        "SessionContext",
        "build_session_context",
    ),
    "knightcode._session.projection": (
        "SessionProjection",
        "project_path",
    ),
}
"""Where each public name lives, by module (the type checker reads the imports above; a test
keeps the two in step)."""

_LOCATIONS = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [*sorted(_LOCATIONS), "__version__"]


def __getattr__(name: str) -> object:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'knightcode' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
