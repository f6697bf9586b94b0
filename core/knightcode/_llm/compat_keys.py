"""The ``compat`` switches knightcode's OpenAI clients implement (models.json ``compat``).

Kept apart from :mod:`knightcode._llm.openai_convert` so that reading models.json — which warns
about switches nobody implements — does not import the request conversion and the session
modules it needs (``--list-models`` and start-up time).
"""

from __future__ import annotations

__all__ = ["COMPAT_KEYS"]

COMPAT_KEYS = frozenset(
    {
        "maxTokensField",
        "supportsDeveloperRole",
        "supportsReasoningEffort",
        "supportsUsageInStreaming",
        "supportsStore",
        "thinkingFormat",
        "requiresToolResultName",
        "requiresMistralToolIds",
        "openRouterRouting",
        "vercelGatewayRouting",
        "extraBody",
        "supportsLongCacheRetention",  # the Responses API client's
        "requiresReasoningContentOnAssistantMessages",
        "zaiToolStream",
    }
)
"""The ``compat`` switches the chat-completions and Responses clients implement."""
