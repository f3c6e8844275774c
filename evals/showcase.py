"""What a user sees of a few vendors' graphs, as markdown: the top entities of
``find_vendor_info``'s metadata answer and the strongest relationships of its capped
graph. It runs ``python -m kg stats`` and ``python -m kg export`` of the checkout it is
started from (so two checkouts give a before and an after on their own databases).

    DATABASE_URL=postgresql://.../kb_eval_vendor_corpus \\
        python evals/showcase.py "Red Hat" Atlassian "Dan Abramov"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from typing import Any


def _kg(*args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "kg", *args, "--json"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"python -m kg {' '.join(args)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def show(vendor: str, top: int) -> str:
    stats = _kg("stats", vendor)
    graph = _kg("export", vendor)
    names = {e["id"]: e["name"] for e in graph["nodes"]}
    rels = graph["edges"]
    kinds = Counter(r["type"] for r in rels)
    typed = sorted(
        (r for r in rels if r["type"] != "MENTIONED_WITH"),
        key=lambda r: (-r["confidence"], str(names.get(r["source"])), r["type"]),
    )
    weak = stats["relationship_type_distribution"].get("MENTIONED_WITH", 0)
    lines = [
        f"**{stats['vendor']}**: {stats['entity_count']} entities, "
        f"{stats['relationship_count']} relationships ({stats['relationship_count'] - weak} typed)",
        "",
        "top entities: "
        + ", ".join(f"{e['name']} ({e['type']})" for e in stats["top_entities"][:top]),
        "",
        f"capped graph ({len(rels)} relationships, "
        + ", ".join(f"{k} {v}" for k, v in kinds.most_common())
        + "), strongest typed:",
    ]
    lines += [
        f"- {names.get(r['source'], r['source'])} {r['type']} {names.get(r['target'], r['target'])}"
        f" ({r['confidence']:.2f})"
        for r in typed[:top]
    ] or ["- (none)"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vendors", nargs="+", help="vendor names")
    parser.add_argument("--top", type=int, default=8, help="entities and relationships shown")
    args = parser.parse_args()
    print("\n\n".join(show(v, args.top) for v in args.vendors))


if __name__ == "__main__":
    main()
