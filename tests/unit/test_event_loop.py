"""The server's event loop: uvloop by default, asyncio's own on request."""

from __future__ import annotations

import argparse

import pytest

from services.config import ServerOptions, add_arguments, options_from
from services.server import loop_name, run_async


async def running_loop() -> str:
    return loop_name()


@pytest.mark.parametrize(
    ("choice", "expected"), [("auto", "uvloop"), ("uvloop", "uvloop"), ("asyncio", "asyncio")]
)
def test_run_async_runs_on_the_chosen_loop(choice: str, expected: str) -> None:
    assert run_async(running_loop(), choice) == expected


def test_the_loop_is_a_flag_and_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    def parsed(*argv: str) -> ServerOptions:
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        return options_from(parser.parse_args(argv))

    assert parsed().event_loop == "auto"
    assert parsed("--event-loop", "asyncio").event_loop == "asyncio"
    monkeypatch.setenv("GLINTWICK_EVENT_LOOP", "uvloop")
    assert parsed().event_loop == "uvloop"
    with pytest.raises(SystemExit):
        parsed("--event-loop", "tokio")
