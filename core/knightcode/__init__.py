"""knightcode: a plugin-first coding agent for the terminal.

This module is the public API — for plugins and for programs that embed knightcode — together with
:mod:`knightcode.testing` (a scripted model server for tests) and :mod:`knightcode.rpc` (a client
for RPC mode). Everything else is private: modules whose names start with ``_`` may change without
notice. Names are imported on first use, so ``import knightcode`` stays cheap (a plugin that only
needs :data:`hookimpl` does not pay for the model clients).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode._lazy import lazy_attributes
from knightcode._version import __version__

if TYPE_CHECKING:
    # ``name as name``: explicitly re-exported for type checkers (``__all__`` is built below).
    from knightcode._abort import (
        Aborted as Aborted,
        AbortSignal as AbortSignal,
    )
    from knightcode._agent.retry import RetrySettings as RetrySettings
    from knightcode._agent.tool_set import ToolInfo as ToolInfo
    from knightcode._config.compaction_settings import CompactionSettings as CompactionSettings
    from knightcode._config.loading import Settings as Settings
    from knightcode._errors import (
        ConfigError as ConfigError,
        KnightcodeError as KnightcodeError,
        PluginError as PluginError,
        SettingsError as SettingsError,
        UsageError as UsageError,
    )
    from knightcode._llm.classify import (
        Answer as Answer,
        BoolAnswer as BoolAnswer,
        BoolQuestion as BoolQuestion,
        ChoiceAnswer as ChoiceAnswer,
        ChoiceQuestion as ChoiceQuestion,
        Classification as Classification,
        ClassificationError as ClassificationError,
        ClassifyRequest as ClassifyRequest,
        Question as Question,
        ScoreAnswer as ScoreAnswer,
        ScoreQuestion as ScoreQuestion,
        answer_from_probabilities as answer_from_probabilities,
    )
    from knightcode._llm.discovery import (
        DiscoveredModels as DiscoveredModels,
        DiscoveryError as DiscoveryError,
        ProviderAccess as ProviderAccess,
    )
    from knightcode._llm.errors import (
        backoff_delay_ms as backoff_delay_ms,
        is_context_overflow as is_context_overflow,
        is_retryable as is_retryable,
    )
    from knightcode._llm.keys import AuthStorage as AuthStorage
    from knightcode._llm.openai_completions import (
        stream_openai_completions as stream_openai_completions,
    )
    from knightcode._llm.registry import ModelRegistry as ModelRegistry
    from knightcode._llm.summary import (
        MIN_SUMMARY_TOKENS as MIN_SUMMARY_TOKENS,
        SUMMARIZATION_SYSTEM_PROMPT as SUMMARIZATION_SYSTEM_PROMPT,
        UPDATE_PROMPT as UPDATE_PROMPT,
        SummarizationAborted as SummarizationAborted,
        SummarizationError as SummarizationError,
        SummaryResult as SummaryResult,
        build_summary_prompt as build_summary_prompt,
        estimate_request_tokens as estimate_request_tokens,
        generate_summary as generate_summary,
        generate_summary_with_usage as generate_summary_with_usage,
        output_budget as output_budget,
        request_summary as request_summary,
    )
    from knightcode._llm.types import (
        Context as Context,
        Model as Model,
        ModelCost as ModelCost,
        StreamOptions as StreamOptions,
        Tool as Tool,
        calculate_cost as calculate_cost,
        new_assistant_message as new_assistant_message,
    )
    from knightcode._markers import (
        hookimpl as hookimpl,
        hookspec as hookspec,
    )
    from knightcode._plugins.combine import Rule as Rule
    from knightcode._plugins.context import (
        ExtensionUI as ExtensionUI,
        FlagValue as FlagValue,
        FlagValues as FlagValues,
        HeadlessUI as HeadlessUI,
        HookContext as HookContext,
        NoSessionError as NoSessionError,
        NotifyLevel as NotifyLevel,
        SessionMode as SessionMode,
    )
    from knightcode._plugins.definitions import (
        CommandDefinition as CommandDefinition,
        CommandHandler as CommandHandler,
        FlagDefinition as FlagDefinition,
        OnUpdate as OnUpdate,
        ProviderDefinition as ProviderDefinition,
        ShortcutDefinition as ShortcutDefinition,
        ToolDefinition as ToolDefinition,
        ToolExecute as ToolExecute,
    )
    from knightcode._plugins.handles import (
        AgentHandle as AgentHandle,
        ForkOutcome as ForkOutcome,
        SessionView as SessionView,
        TreeOutcome as TreeOutcome,
    )
    from knightcode._plugins.hooks import (
        AgentStartOutcome as AgentStartOutcome,
        Hooks as Hooks,
        InputOutcome as InputOutcome,
    )
    from knightcode._plugins.host import (
        PluginFailure as PluginFailure,
        PluginHost as PluginHost,
    )
    from knightcode._plugins.planning import (
        HostOptions as HostOptions,
        create_plugin_host as create_plugin_host,
    )
    from knightcode._plugins.preparations import (
        BranchSummarizer as BranchSummarizer,
        CompactionPreparation as CompactionPreparation,
        FileOperations as FileOperations,
        TreePreparation as TreePreparation,
    )
    from knightcode._plugins.records import (
        PluginKind as PluginKind,
        PluginRecord as PluginRecord,
        PluginStatus as PluginStatus,
    )
    from knightcode._plugins.reload import (
        ReloadReport as ReloadReport,
        reload_extensions as reload_extensions,
        watch as watch,
    )
    from knightcode._plugins.results import (
        UNCHANGED as UNCHANGED,
        AgentStartChanges as AgentStartChanges,
        BashAnswer as BashAnswer,
        Block as Block,
        BranchSummary as BranchSummary,
        Cancel as Cancel,
        CompactionOverride as CompactionOverride,
        CompactionVerdict as CompactionVerdict,
        ForkOptions as ForkOptions,
        Handled as Handled,
        PluginMessage as PluginMessage,
        Resources as Resources,
        RunInBackend as RunInBackend,
        ToolResultPatch as ToolResultPatch,
        Transform as Transform,
        TreeNavigationOptions as TreeNavigationOptions,
    )
    from knightcode._session.context import (
        SessionContext as SessionContext,
        build_session_context as build_session_context,
    )
    from knightcode._session.messages import (
        content_text as content_text,
        convert_to_llm as convert_to_llm,
        create_branch_summary_message as create_branch_summary_message,
        create_compaction_summary_message as create_compaction_summary_message,
        create_custom_message as create_custom_message,
    )
    from knightcode._session.projection import (
        SessionProjection as SessionProjection,
        project_path as project_path,
    )
    from knightcode._session.serialization import serialize_conversation as serialize_conversation
    from knightcode._session.tokens import (
        estimate_context_tokens as estimate_context_tokens,
        estimate_text_tokens as estimate_text_tokens,
        estimate_tokens as estimate_tokens,
    )
    from knightcode._tools.backend import (
        DirEntry as DirEntry,
        ExecResult as ExecResult,
        ExecutionBackend as ExecutionBackend,
        FileInfo as FileInfo,
        HostCommand as HostCommand,
        HostCommands as HostCommands,
        OutputCallback as OutputCallback,
    )
    from knightcode._tools.context import ToolContext as ToolContext
    from knightcode._tools.local_backend import LocalBackend as LocalBackend
    from knightcode._tools.nested import NestedResult as NestedResult
    from knightcode._types.entries import (
        CONTEXT_ENTRY_TYPES as CONTEXT_ENTRY_TYPES,
        CURRENT_SESSION_VERSION as CURRENT_SESSION_VERSION,
        ENTRY_TYPES as ENTRY_TYPES,
        BranchSummaryEntry as BranchSummaryEntry,
        CompactionEntry as CompactionEntry,
        ContextEdit as ContextEdit,
        ContextEditEntry as ContextEditEntry,
        CustomEntry as CustomEntry,
        CustomMessageEntry as CustomMessageEntry,
        FileEntry as FileEntry,
        LabelEntry as LabelEntry,
        MessageEntry as MessageEntry,
        ModelChangeEntry as ModelChangeEntry,
        OmitEdit as OmitEdit,
        ReplaceEdit as ReplaceEdit,
        SessionEntry as SessionEntry,
        SessionHeader as SessionHeader,
        SessionInfoEntry as SessionInfoEntry,
        ThinkingLevelChangeEntry as ThinkingLevelChangeEntry,
        make_header as make_header,
    )
    from knightcode._types.events import (
        AgentEndEvent as AgentEndEvent,
        AgentEvent as AgentEvent,
        AgentSettledEvent as AgentSettledEvent,
        AgentStartEvent as AgentStartEvent,
        AutoRetryEndEvent as AutoRetryEndEvent,
        AutoRetryStartEvent as AutoRetryStartEvent,
        CompactionEndEvent as CompactionEndEvent,
        CompactionReason as CompactionReason,
        CompactionResult as CompactionResult,
        CompactionStartEvent as CompactionStartEvent,
        EntryAppendedEvent as EntryAppendedEvent,
        MessageEndEvent as MessageEndEvent,
        MessageStartEvent as MessageStartEvent,
        MessageUpdateEvent as MessageUpdateEvent,
        QueueUpdateEvent as QueueUpdateEvent,
        SessionEvent as SessionEvent,
        SessionInfoChangedEvent as SessionInfoChangedEvent,
        SummarizationRetryAttemptStartEvent as SummarizationRetryAttemptStartEvent,
        SummarizationRetryFinishedEvent as SummarizationRetryFinishedEvent,
        SummarizationRetryScheduledEvent as SummarizationRetryScheduledEvent,
        ThinkingLevelChangedEvent as ThinkingLevelChangedEvent,
        ToolExecutionEndEvent as ToolExecutionEndEvent,
        ToolExecutionStartEvent as ToolExecutionStartEvent,
        ToolExecutionUpdateEvent as ToolExecutionUpdateEvent,
        TurnEndEvent as TurnEndEvent,
        TurnStartEvent as TurnStartEvent,
    )
    from knightcode._types.messages import (
        THINKING_LEVELS as THINKING_LEVELS,
        AgentMessage as AgentMessage,
        AssistantContent as AssistantContent,
        AssistantMessage as AssistantMessage,
        BashExecutionMessage as BashExecutionMessage,
        BranchSummaryMessage as BranchSummaryMessage,
        CompactionSummaryMessage as CompactionSummaryMessage,
        ContentBlock as ContentBlock,
        Cost as Cost,
        CustomMessage as CustomMessage,
        ImageContent as ImageContent,
        LlmMessage as LlmMessage,
        StopReason as StopReason,
        TextContent as TextContent,
        ThinkingContent as ThinkingContent,
        ThinkingLevel as ThinkingLevel,
        ToolCall as ToolCall,
        ToolResult as ToolResult,
        ToolResultContent as ToolResultContent,
        ToolResultMessage as ToolResultMessage,
        Usage as Usage,
        UserContent as UserContent,
        UserMessage as UserMessage,
        thinking_level_of as thinking_level_of,
    )
    from knightcode._types.stream import (
        AssistantMessageEvent as AssistantMessageEvent,
        DoneEvent as DoneEvent,
        ErrorEvent as ErrorEvent,
        StartEvent as StartEvent,
        TextDeltaEvent as TextDeltaEvent,
        TextEndEvent as TextEndEvent,
        TextStartEvent as TextStartEvent,
        ThinkingDeltaEvent as ThinkingDeltaEvent,
        ThinkingEndEvent as ThinkingEndEvent,
        ThinkingStartEvent as ThinkingStartEvent,
        ToolCallDeltaEvent as ToolCallDeltaEvent,
        ToolCallEndEvent as ToolCallEndEvent,
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
        "SessionMode",
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
        "HostCommand",
        "HostCommands",
        "OutputCallback",
    ),
    "knightcode._tools.local_backend": ("LocalBackend",),
    "knightcode._tools.nested": ("NestedResult",),
    "knightcode._config.loading": ("Settings",),
    "knightcode._config.compaction_settings": ("CompactionSettings",),
    "knightcode._agent.retry": ("RetrySettings",),
    "knightcode._agent.tool_set": ("ToolInfo",),
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


__getattr__ = lazy_attributes(__name__, _LOCATIONS)


def __dir__() -> list[str]:
    return sorted(__all__)
