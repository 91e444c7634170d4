"""Every repository path and dotted name the docs (README.md, BENCHMARKS.md, docs/*.md,
the examples' READMEs) give in backticks is there (tests/support/doc_references.py),
and the checker finds a planted wrong one."""

from __future__ import annotations

from pathlib import Path

from tests.support.doc_references import (
    ROOT,
    docs_of,
    references,
    session_mentions,
    stale_references,
)


def test_every_path_and_name_the_docs_give_exists() -> None:
    stale = stale_references()
    assert not stale, "stale references in the docs:\n" + "\n".join(map(str, stale))


def test_the_checker_reads_the_docs() -> None:
    """(The check above passes vacuously if nothing is read as a reference.)"""
    found = {ref.text for ref in references(ROOT, docs_of(ROOT))}
    assert {"engine/game/moves.py", "services/usecases/", "clients/table.py"} <= found
    assert "clients.botpool.BotPool" in found
    assert len(found) > 150


def test_planted_wrong_paths_and_names_are_found(tmp_path: Path) -> None:
    doc = tmp_path / "PLANTED.md"
    doc.write_text(
        "Rules live in `engine/game/moves.py` and `services/usecases/`, a test\n"
        "`tests/unit/test_table.py::test_nothing_like_it`,\n"
        "a bot `docs/examples/lowball_bot.py:Nobody`;\n"
        "the moves in `engine/game/nowhere.py`, the store in `services/store/redis.py`,\n"
        "the cases in `services/usecases/moves.py/` and `tests/nothing/` (a folder);\n"
        "names: `engine.solver.analyse`, `clients.botpool.BotPool.run()`,\n"
        "`engine.solver.no_such_thing`, `clients.nowhere.Thing(x, y)`;\n"
        "the API's `glintwick.v1.GameService`, the liveness check `glintwick.liveness`,\n"
        "and `glintwick.v1.NoSuchService`.\n"
        "Left alone: `tests/...`, `make run`, `Event.for_seat`, `redis/`.\n"
        "```\nengine/in/a/fenced/block.py `engine/fenced.py`\n```\n"
    )
    stale = {(ref.text, ref.why) for ref in stale_references(ROOT, [doc])}
    assert stale == {
        ("tests/unit/test_table.py::test_nothing_like_it", "has no test_nothing_like_it"),
        ("docs/examples/lowball_bot.py:Nobody", "has no Nobody"),
        ("engine/game/nowhere.py", "names nothing"),
        ("services/store/redis.py", "names nothing"),
        ("services/usecases/moves.py/", "is no folder"),
        ("tests/nothing/", "names nothing"),
        ("engine.solver.no_such_thing", "has no no_such_thing"),
        ("clients.nowhere.Thing(x, y)", "has no nowhere"),
        ("glintwick.v1.NoSuchService", "has no NoSuchService"),
    }
    read = {ref.text for ref in references(ROOT, [doc])}
    assert "engine/game/moves.py" in read and "glintwick.liveness" in read
    assert not read & {"tests/...", "make run", "Event.for_seat", "redis/", "engine/fenced.py"}


def test_no_doc_or_comment_cites_a_development_session(tmp_path: Path) -> None:
    assert session_mentions() == []
    planted = tmp_path / "notes.py"
    cited, plural = "ses" + "sion 12", "Ses" + "sions 3-4"  # (split: this file cites none)
    planted.write_text(
        f"# as {cited} found, the cache...\n"
        f"x = 1  # ({plural})\n"
        "# a Play session, 300 sessions on one stream, session_id 7, the session's N seats\n"
    )
    assert session_mentions(tmp_path, [planted]) == [
        f"{planted}:1: # as {cited} found, the cache...",
        f"{planted}:2: x = 1  # ({plural})",
    ]
