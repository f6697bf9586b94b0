"""The failures a llama.cpp user meets, each with a message that says what to do.

Every exception here is a :class:`RouterError`; its ``str()`` is the whole message shown to the
user (one line). The wording names the router URL and the model, because a router may be shared
and the user has to know which server and which model to fix.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ContextTooSmall",
    "CorruptModel",
    "LoadFailed",
    "ModelNotFound",
    "ModelNotLoaded",
    "NotRouterMode",
    "RouterError",
    "RouterUnreachable",
    "Unauthorized",
]


class RouterError(Exception):
    """A request to the router failed.

    :param message: the sentence for the user
    :param status: the HTTP status, when the router answered
    :param detail: the router's own error message, when it sent one
    :param body: the router's JSON error object (``type``, ``n_ctx`` …), when it sent one
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        detail: str = "",
        body: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail
        self.body: Mapping[str, object] = body or {}


class RouterUnreachable(RouterError):
    """No connection, or the connection dropped: the router is down, restarting or elsewhere."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            f"llama.cpp router not reachable at {url} ({reason}). Start llama-server in router "
            "mode, or set its URL with /login llama.cpp or LLAMA_BASE_URL."
        )


class NotRouterMode(RouterError):
    """The server runs one model (started with ``-m``/``--model`` or ``-hf``)."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"The llama.cpp server at {url} is not in router mode: it was started with a model "
            "(-m/--model or -hf). Restart llama-server without a model, e.g. with --models-dir."
        )


class Unauthorized(RouterError):
    """401: the key is wrong, or the router wants one and none was sent."""

    def __init__(self, url: str, sent_key: bool) -> None:
        problem = "rejected the API key" if sent_key else "requires an API key and none is set"
        super().__init__(
            f"The llama.cpp router at {url} {problem} (401). Use the key llama-server was started "
            "with (--api-key): /login llama.cpp or LLAMA_API_KEY.",
            401,
        )


class ModelNotFound(RouterError):
    """The router does not know the model id."""

    def __init__(self, url: str, model_id: str, known: list[str] | None = None) -> None:
        listing = f" Models it has: {', '.join(known)}." if known else ""
        super().__init__(
            f"Model {model_id!r} not found on the llama.cpp router at {url}.{listing} New files "
            "in --models-dir appear after a router restart.",
            404,
        )


class ModelNotLoaded(RouterError):
    """Autoload is off and the model is not loaded."""

    def __init__(self, model_id: str) -> None:
        super().__init__(
            f"llama.cpp model {model_id!r} is not loaded and the router does not load models on "
            f"demand (--no-models-autoload): load it with /llama load {model_id}.",
            400,
        )


class LoadFailed(RouterError):
    """The router reported the load as failed (the model's process exited)."""

    def __init__(self, model_id: str, exit_code: int | None) -> None:
        code = f" (llama-server exited with code {exit_code})" if exit_code is not None else ""
        super().__init__(
            f"llama.cpp model {model_id!r} failed to load{code}. The router's log says why; "
            "common causes are too little memory (lower -c or unload another model) and "
            "options in the model's preset that llama-server rejects."
        )


class CorruptModel(LoadFailed):
    """The load failed and the model file is not a valid GGUF file."""

    def __init__(self, model_id: str, path: str, problem: str) -> None:
        RouterError.__init__(
            self,
            f"llama.cpp model {model_id!r} is corrupt: {path} {problem}. Download it again or "
            "remove it from the models directory.",
        )


class ContextTooSmall(RouterError):
    """The prompt does not fit the model's context window.

    The message keeps llama.cpp's own wording ("exceeds the available context size"), which the
    agent recognises as a context overflow and answers by compacting.
    """

    def __init__(
        self, model_id: str, prompt_tokens: int | None, n_ctx: int | None, hint: str
    ) -> None:
        self.model_id, self.prompt_tokens, self.n_ctx = model_id, prompt_tokens, n_ctx
        needed = f"{prompt_tokens} tokens" if prompt_tokens else "the prompt"
        window = f"{n_ctx} tokens" if n_ctx else "its context window"
        super().__init__(
            f"request ({needed}) exceeds the available context size ({window}) of llama.cpp "
            f"model {model_id!r}: {hint}",
            400,
        )
