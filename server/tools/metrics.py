"""``get_server_metrics``: this replica's figures and every live replica's."""

from __future__ import annotations

from server.envelope import envelope
from server.errors import failure_from
from server.tools.arguments import ToolArguments
from server.tools.base import Answer, Call, Tool


class GetServerMetrics(Tool):
    """This replica's metrics (``replica`` names it) and, under ``replicas``, every
    live replica's own, read from the database (None while unreachable). Never
    cached, and it answers even while the database is down (no read snapshot)."""

    name = "get_server_metrics"
    description = "Per-tool call counts, latency percentiles, cache hit rates and errors."
    snapshot = False

    class Arguments(ToolArguments):
        pass

    def answer(self, call: Call, args: Arguments) -> Answer:
        service = self.service
        snap = service.replica_metrics()
        snap["replica"] = service.replicas.name
        try:
            snap["graph_build_id"] = service.kg.build_id()
            snap["database"] = "ok"
            snap["replicas"] = service.replicas.live()
        except Exception as exc:
            snap["graph_build_id"] = None
            snap["database"] = f"unavailable: {failure_from(exc) or type(exc).__name__}"
            snap["replicas"] = None
        env = envelope("get_server_metrics", call.rid, snap, elapsed_ms=call.elapsed_ms())
        return Answer(self.account(env))
