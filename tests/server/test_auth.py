"""API keys, the cursor secret and rate limits, shared through the database (server.auth)."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest

from server.auth import Gate, KeyStore, KeyStoreError, digest
from server.errors import ErrorCode, ToolFailure, failure_from
from server.ratelimit import TokenBucketLimiter
from sql.database import Database
from sql.queries import queries

LIMITS = {"minute": 100, "hour": 1_000, "day": 10_000}


def _code(call: Any) -> ErrorCode:
    with pytest.raises(ToolFailure) as info:
        call()
    return info.value.code


def test_keys_are_stored_hashed_and_revocation_and_new_keys_need_no_restart(
    db: Database,
) -> None:
    store = KeyStore(db)
    gate = Gate(db, LIMITS)
    try:
        key = store.create("laptop")
        with psycopg.connect(db.conninfo) as conn:
            stored = str(conn.execute("SELECT * FROM api_keys").fetchall())
        assert key.startswith("kb_") and key not in stored and digest(key) in stored
        assert gate.admit(key).name == "laptop"
        assert gate.admit(f"  {key}\n").name == "laptop"
        assert _code(lambda: gate.admit(None)) is ErrorCode.AUTH_REQUIRED
        assert _code(lambda: gate.admit("   ")) is ErrorCode.AUTH_REQUIRED
        with pytest.raises(ToolFailure) as wrong:
            gate.admit(key + "x")
        assert wrong.value.code is ErrorCode.AUTH_INVALID and key not in str(wrong.value)
        assert _code(lambda: gate.admit("kb_" + "z" * 10_000)) is ErrorCode.AUTH_INVALID

        # revoked: the very next call through the same running gate is refused
        assert store.revoke("laptop").revoked is not None
        assert _code(lambda: gate.admit(key)) is ErrorCode.AUTH_INVALID
        # a key made while the gate runs is accepted at once; the name is free again
        again = store.create("laptop")
        assert gate.admit(again).name == "laptop"
        record = store.revoke(gate.admit(again).key_id)  # by id
        assert record.name == "laptop"
        assert _code(lambda: gate.admit(again)) is ErrorCode.AUTH_INVALID
        assert [r.revoked is not None for r in store.records()] == [True, True]
        assert store.active_count() == 0
    finally:
        gate.close()


@pytest.mark.parametrize("name", ["", " ", "bad name!", "x" * 65, "semi;colon"])
def test_bad_key_names_and_unknown_keys_are_refused(db: Database, name: str) -> None:
    store = KeyStore(db)
    with pytest.raises(KeyStoreError, match="a key name is"):
        store.create(name)
    store.create("desk")
    with pytest.raises(KeyStoreError, match="an active key named 'desk' exists"):
        store.create("desk")
    with pytest.raises(KeyStoreError, match="no active key named or with id 'nobody'"):
        store.revoke("nobody")


def test_the_database_buckets_do_the_reference_arithmetic(db: Database) -> None:
    """kb_admit against TokenBucketLimiter, call by call, at seeded random times
    (refills, refusals, every tier exhausted in turn)."""
    limits = {"minute": 3, "hour": 7, "day": 11}
    key = KeyStore(db).create("arith")
    rng = random.Random(20261125)
    now = [0.0]
    reference = TokenBucketLimiter(limits, clock=lambda: now[0])
    start = datetime(2026, 1, 1, tzinfo=UTC)
    steps = 0
    with db.connect(autocommit=True) as conn:
        for _ in range(400):
            # microsecond steps, as the database's clock counts them
            now[0] += rng.choice([0, 1, 7, 23, 90, 700, 4000]) + rng.randrange(10**6) / 10**6
            expected = reference.check("k")
            row = conn.execute(
                queries()["admit_at"],
                {
                    "digest": digest(key),
                    "limits": [float(n) for n in limits.values()],
                    "now": start + timedelta(seconds=now[0]),
                },
            ).fetchone()
            assert row is not None
            got = (row["allowed"], dict(zip(limits, row["remaining"], strict=True)))
            assert got == (expected.allowed, expected.remaining), steps
            assert -(-row["wait_s"] // 1) == expected.reset_in_seconds, steps
            steps += 1
    assert steps == 400


def test_limits_are_exact_across_replicas_under_concurrency(db: Database) -> None:
    """Three connections (three replicas) admit 150 calls of one key at once with the
    clock stopped: exactly 100 pass the minute tier, and no update is lost."""
    store = KeyStore(db)
    key, other = store.create("busy"), store.create("quiet")
    with db.connect() as conn:  # the database's clock, which the gate below reads too
        row = conn.execute("SELECT clock_timestamp() AS now").fetchone()
    assert row is not None
    frozen = row["now"]
    allowed: list[bool] = []
    lock = threading.Lock()
    barrier = threading.Barrier(3)

    def replica() -> None:
        with db.connect(autocommit=True) as conn:
            barrier.wait()
            for _ in range(50):
                row = conn.execute(
                    queries()["admit_at"],
                    {"digest": digest(key), "limits": [100.0, 1000.0, 10000.0], "now": frozen},
                ).fetchone()
                assert row is not None
                with lock:
                    allowed.append(bool(row["allowed"]))

    threads = [threading.Thread(target=replica) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(allowed) == 150 and sum(allowed) == 100
    gate = Gate(db, LIMITS)
    try:
        assert gate.admit(other).decision.remaining["minute"] == 99  # its own bucket
        with pytest.raises(ToolFailure) as refused:
            gate.admit(key)
        assert refused.value.code is ErrorCode.RATE_LIMIT
        details = refused.value.details
        assert details["remaining"] == {"minute": 0, "hour": 900, "day": 9900}
        assert 1 <= details["reset_in_seconds"] <= 60
    finally:
        gate.close()


def test_the_gate_recovers_a_connection_that_broke_while_idle(db: Database) -> None:
    key = KeyStore(db).create("idle")
    gate = Gate(db, LIMITS, pool_size=1)
    try:
        gate.admit(key)
        with psycopg.connect(db.conninfo, autocommit=True) as conn:
            killed = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert killed is not None and killed[0] >= 1
        assert gate.admit(key).name == "idle"  # retried on a fresh connection
    finally:
        gate.close()


def test_an_unreachable_key_store_is_a_db_connection_error(tmp_path: Path) -> None:
    gone = Database("postgresql://kb@127.0.0.1:1/none", None, connect_timeout=1)
    with pytest.raises(Exception) as info:
        KeyStore(gone).create("x")
    failure = failure_from(info.value)
    assert failure is not None and failure.code is ErrorCode.DB_CONNECTION


def test_replicas_agree_on_one_cursor_secret(db: Database) -> None:
    secrets: list[bytes] = []
    barrier = threading.Barrier(4)

    def replica() -> None:
        barrier.wait()
        secrets.append(KeyStore(db).cursor_secret())

    threads = [threading.Thread(target=replica) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(secrets) == 4 and len(set(secrets)) == 1 and len(secrets[0]) == 32


def test_an_old_key_file_is_imported_once(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "api_keys.json"
    records = [
        {
            "name": "a",
            "key_id": digest("kb_a")[:8],
            "digest": digest("kb_a"),
            "created": "2026-01-01",
        },
        {
            "name": "b",
            "key_id": digest("kb_b")[:8],
            "digest": digest("kb_b"),
            "created": "2026-01-01T10:00:00+00:00",
            "revoked": True,
        },
    ]
    path.write_bytes(orjson.dumps({"keys": records, "cursor_secret": "cd" * 32}))
    store = KeyStore(db)
    report = store.import_file(path)
    assert report is not None and (report.imported, report.skipped) == (2, 0)
    assert report.moved_to == tmp_path / "api_keys.json.imported" and not path.exists()
    assert store.import_file(path) is None  # once
    gate = Gate(db, LIMITS)
    try:
        assert gate.admit("kb_a").name == "a"
        assert _code(lambda: gate.admit("kb_b")) is ErrorCode.AUTH_INVALID  # stays revoked
    finally:
        gate.close()
    assert store.cursor_secret() == bytes.fromhex("cd" * 32)
    # the same file again (restored by hand): nothing new, nothing changed
    path.write_bytes(orjson.dumps({"keys": records, "cursor_secret": "ef" * 32}))
    again = store.import_file(path)
    assert again is not None and (again.imported, again.skipped) == (0, 2)
    assert store.cursor_secret() == bytes.fromhex("cd" * 32)
    for junk in (b"not json", b"[1, 2]", b'{"keys": [{"name": "x"}]}'):
        path.write_bytes(junk)
        with pytest.raises(KeyStoreError, match="is not a key file"):
            store.import_file(path)
        assert path.read_bytes() == junk  # left for the user to look at


@pytest.mark.parametrize("async_commit", [True, False])
def test_admissions_commit_asynchronously_only_with_the_speed_layer(
    db: Database, async_commit: bool
) -> None:
    """Speed layer async-commit: the gate's connections do not wait for the disk
    (synchronous_commit off); either way the buckets count exactly."""
    store = KeyStore(db)
    gate = Gate(db, {"minute": 3, "hour": 1_000, "day": 10_000}, async_commit=async_commit)
    try:
        key = store.create(f"commit-{async_commit}")
        with gate.pool.connection() as conn:
            row = conn.execute("SHOW synchronous_commit").fetchone()
        assert row is not None and row["synchronous_commit"] == ("off" if async_commit else "on")
        assert [gate.admit(key).decision.remaining["minute"] for _ in range(3)] == [2, 1, 0]
        assert _code(lambda: gate.admit(key)) is ErrorCode.RATE_LIMIT
        # another connection sees every token taken
        with psycopg.connect(db.conninfo) as other:
            levels = other.execute("SELECT levels FROM rate_buckets").fetchone()
        assert levels is not None and levels[0][0] < 1
    finally:
        gate.close()
