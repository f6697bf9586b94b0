"""The server's handler registry: every command is routed to a handler of its model."""

from __future__ import annotations

import pytest

from knightcode._modes.rpc import commands as c
from knightcode._modes.rpc.handlers import HANDLERS, Route, handles
from knightcode._modes.rpc.session_handlers import SESSION_HANDLERS


def test_every_command_has_a_handler_taking_its_model() -> None:
    routes = {**HANDLERS, **SESSION_HANDLERS}
    assert set(routes) == set(c.COMMANDS)
    for kind, route in routes.items():
        assert isinstance(route, Route) and route.model is c.COMMANDS[kind], kind


def test_a_handler_registered_with_another_model_is_refused() -> None:
    with pytest.raises(TypeError, match="'set_model' commands are validated as"):
        handles({}, c.Prompt, "set_model")


def test_a_route_checks_the_command_it_is_given() -> None:
    route = HANDLERS["set_model"]
    with pytest.raises(TypeError, match="set_model: expected a SetModel command"):
        route(None, c.RpcCommand(type="set_model"))  # type: ignore[arg-type]
