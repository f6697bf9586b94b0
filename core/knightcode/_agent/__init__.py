"""The agent: the turn loop, tool execution, and ``AgentSession`` tying them to a session file."""
