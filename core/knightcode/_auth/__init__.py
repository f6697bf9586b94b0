"""Subscription logins (OAuth): Anthropic Claude Pro/Max, OpenAI ChatGPT/Codex, GitHub Copilot.

The flows are those of the reference: authorization code with PKCE and a local callback server
(Anthropic, Codex; the redirect URL or ``code#state`` may be pasted instead), and GitHub's device
code flow followed by a Copilot token exchange. Credentials live in ``auth.json`` in the
reference's shape ``{"type": "oauth", "refresh", "access", "expires", …}`` (mode 0600), and are
refreshed shortly before they expire and after a 401 (:mod:`knightcode._auth.tokens`).
"""
