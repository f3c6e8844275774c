"""The replica board on a real PostgreSQL: reports, who is live, who left."""

from __future__ import annotations

import time
from typing import Any

import pytest

from server.replicas import ReplicaBoard, replica_name
from sql.database import Database
from sql.errors import DatabaseUnavailable


def test_boards_list_each_other_drop_the_silent_and_the_stopped(db: Database) -> None:
    calls = {"a": 0, "b": 0}

    def snap(name: str) -> Any:
        return lambda: {"total_calls": calls[name]}

    a = ReplicaBoard(db, "a", snap("a"), start=False)
    b = ReplicaBoard(db, "b", snap("b"), start=False)
    calls["b"] = 7
    b.report()
    seen = {r["name"]: r for r in a.live()}
    assert set(seen) == {"a", "b"} and seen["b"]["total_calls"] == 7
    assert seen["a"]["self"] and not seen["b"]["self"]
    # a replica that stopped reporting long ago is not listed
    with db.connect(autocommit=True) as conn:
        conn.execute(
            "UPDATE server_replicas SET seen_at = now() - interval '1 hour' WHERE name = 'b'"
        )
    assert [r["name"] for r in a.live()] == ["a"]
    b.report()
    b.close()  # a replica that stops takes its row away
    assert [r["name"] for r in a.live()] == ["a"]
    a.close()
    with db.connect() as conn:
        left = conn.execute("SELECT count(*) AS n FROM server_replicas").fetchone()
    assert left is not None and left["n"] == 0


def test_with_a_pool_the_board_is_read_on_pooled_connections(db: Database) -> None:
    """get_server_metrics asks live() each call: a new connection each time cost
    it about 10 ms; with the service's pool it opens none (here the board's own
    database cannot even be reached, and live() still answers)."""
    pool = db.pool(min_size=1, max_size=1)
    unreachable = Database("postgresql://kb@127.0.0.1:1/kb", None, connect_timeout=1)
    board = ReplicaBoard(unreachable, "pooled", lambda: {"total_calls": 3}, start=False, pool=pool)
    try:
        for _ in range(3):
            rows = board.live()
            assert [(r["name"], r["total_calls"]) for r in rows] == [("pooled", 3)]
        assert pool.get_stats()["requests_num"] >= 3
        with pytest.raises(DatabaseUnavailable):
            board.report()  # the heartbeat keeps a connection of its own
    finally:
        with db.connect(autocommit=True) as conn:
            conn.execute("DELETE FROM server_replicas WHERE name = 'pooled'")
        pool.close()


def test_the_beat_reports_without_being_asked(db: Database) -> None:
    board = ReplicaBoard(db, "beat", lambda: {"total_calls": 1}, interval=0.05)
    try:
        with db.connect() as conn:
            for _ in range(100):
                row = conn.execute(
                    "SELECT metrics FROM server_replicas WHERE name = 'beat'"
                ).fetchone()
                if row is not None:
                    break
                conn.rollback()
                time.sleep(0.05)
        assert row is not None and row["metrics"] == {"total_calls": 1}
    finally:
        board.close()


def test_a_name_is_given_or_made_unique_per_process() -> None:
    assert replica_name("eu-west-1", 8000) == "eu-west-1"
    made = replica_name(None, 8123)
    assert made.endswith(":8123:" + made.rsplit(":", 1)[1]) and made.count(":") == 2
    assert ":stdio:" in replica_name(None, None)


@pytest.mark.parametrize("bad", ["", "x" * 201])
def test_a_bad_replica_name_is_refused_with_the_variable_named(bad: str) -> None:
    from pydantic import ValidationError

    from server.settings import ServerSettings
    from sql.settings import settings_problem

    with pytest.raises(ValidationError) as info:
        ServerSettings(KB_REPLICA_NAME=bad)
    assert "KB_REPLICA_NAME" in settings_problem(info.value)
