"""Fixtures for the search tests: a small vendor corpus built by the real rebuild."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from sql.database import Database, open_database
from sql.settings import DatabaseSettings

ROCKET = """---
title: Acme Rocket Platform
category: product
released: 2021-03-04
---
# Acme Rocket Platform

Acme Corporation builds the Roadrunner 3000 rocket sled, a propulsion system for desert
transport. The sled reaches 300 km/h and runs on liquid oxygen.

## Safety

Every Roadrunner sled ships with a parachute brake and an automatic fuel cut-off.
"""

PRICING = """---
title: Acme pricing
category: pricing
released: 2024-06-01
---
# Pricing

The Roadrunner 3000 costs 4,000 dollars. Volume discounts are negotiated per contract.
Café owners in Zürich get a 5% rebate.
"""

GLOBEX = """---
title: Globex overview
category: company
released: 2019-01-15
---
# Globex

Globex Corporation makes data-centre cooling units and industrial heat pumps. Hank Scorpio
is the chief executive. Globex is based in Springfield, Oregon.
"""

INITECH = """---
title: Initech reports
category: company
released: 2023-09-09
---
# Initech

Initech produces TPS report software for enterprise paperwork and compliance auditing.
"""


def _long_note() -> str:
    paragraphs = [
        f"Paragraph {i} about the Hyperdrive engine maintenance schedule: inspect the "
        f"plasma coils, replace coolant filter {i}, recalibrate thrust vectoring and log "
        "the warp core temperature readings for the quarterly reliability review."
        for i in range(40)
    ]
    return "---\ntitle: Hyperdrive manual\ncategory: manual\n---\n# Hyperdrive manual\n\n" + (
        "\n\n".join(paragraphs)
    )


NOTES = {
    "vendors/Acme/rocket.md": ROCKET,
    "vendors/Acme/pricing.md": PRICING,
    "vendors/Globex/overview.md": GLOBEX,
    "vendors/Initech/reports.md": INITECH,
    "vendors/Initech/hyperdrive.md": _long_note(),
}


def write_notes(root: Path) -> Path:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def search_db(
    pg_admin: str, template_db: str, embedder: Any, extractor: Any, tmp_path_factory: Any
) -> Iterator[Database]:
    """A knowledge base holding :data:`NOTES`, built once per module by the real rebuild.

    Tests must only read it.
    """
    from extraction.pipeline import Rebuilder

    name = f"kb_test_search_{uuid.uuid4().hex[:10]}"
    _admin(
        pg_admin,
        pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            pgsql.Identifier(name), pgsql.Identifier(template_db)
        ),
    )
    db = open_database(DatabaseSettings(database_url=make_conninfo(pg_admin, dbname=name)))
    root = write_notes(tmp_path_factory.mktemp("notes"))
    Rebuilder(db, embedder=embedder, extractor=extractor).run(root)
    yield db
    _admin(
        pg_admin,
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)),
    )


def _admin(admin: str, statement: pgsql.Composable) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(statement)
