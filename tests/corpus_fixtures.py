"""A small hand-written corpus and a stable view of the knowledge base, shared by
the rebuild, atomicity, CLI, fault and vendor-graph tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sql.database import Database

ACME = """---
title: Acme Rocket Platform
category: product
released: 2021-03-04
---
# Acme Rocket Platform

Acme Corporation is headquartered in Denver, Colorado. Acme Corporation was founded by
Jane Doe in 1999. John Smith is the chief executive officer of Acme Corporation.

## Products

Acme produces the Roadrunner 3000 rocket sled and the Coyote Trap. Acme partners with
Globex Corporation on distribution.
"""

ACME_PRICING = """---
title: Acme pricing
---
# Pricing

The Roadrunner 3000 costs 4,000 dollars. Discounts are negotiated with Acme Corp.
"""

ACME_UPPER = """---
title: Acme support
---
Support for Acme products is provided from Denver by the Acme Inc. support team.
"""

GLOBEX = """---
title: Globex overview
---
# Globex

Globex Corporation is a subsidiary of Initech. Globex is based in Springfield, Oregon.
Hank Scorpio is the CEO of Globex Corporation.
"""


def write_corpus(root: Path) -> Path:
    files = {
        "vendors/Acme/rocket.md": ACME,
        "vendors/Acme/pricing.md": ACME_PRICING,
        "vendors/ACME_Inc./support.md": ACME_UPPER,
        "vendors/Globex/overview.md": GLOBEX,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "vendors/Globex/broken.md").write_bytes(b"\x00\x01\x02binary\x00")
    (root / "vendors/Globex/latin.md").write_bytes("Caf\xe9 notes about Globex.".encode("latin-1"))
    return root


def change_corpus(corpus: Path) -> None:
    (corpus / "vendors/Globex/overview.md").write_text(
        GLOBEX + "\nGlobex partners with Umbrella Corporation in Raccoon City.\n", encoding="utf-8"
    )
    (corpus / "vendors/Acme/pricing.md").unlink()
    new = corpus / "vendors/Initech/tps.md"
    new.parent.mkdir(parents=True)
    new.write_text(
        "# TPS\n\nInitech is headquartered in Austin, Texas. Bill Lumbergh works for Initech.\n"
    )


def snapshot(db: Database) -> dict[str, Any]:
    """Everything a reader could see of the knowledge base, in stable form."""
    with db.connect() as conn:
        return {
            "documents": conn.execute(
                "SELECT source_path, content_hash FROM documents ORDER BY 1"
            ).fetchall(),
            "chunks": conn.execute(
                "SELECT d.source_path, c.chunk_index, c.content_hash FROM chunks c "
                "JOIN documents d ON d.id = c.document_id ORDER BY 1, 2"
            ).fetchall(),
            "entities": conn.execute(
                "SELECT v.normalized_name AS vendor, e.normalized_name, e.type, e.mention_count "
                "FROM entities e JOIN vendors v ON v.id = e.vendor_id ORDER BY 1, 2, 3"
            ).fetchall(),
            "relationships": conn.execute(
                "SELECT s.normalized_name AS s, r.type, t.normalized_name AS t "
                "FROM relationships r JOIN entities s ON s.id = r.source_id "
                "JOIN entities t ON t.id = r.target_id ORDER BY 1, 2, 3"
            ).fetchall(),
            "vendors": conn.execute(
                "SELECT name, normalized_name, aliases, document_count FROM vendors ORDER BY 2"
            ).fetchall(),
        }
