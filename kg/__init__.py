"""The vendor knowledge graph in networkx: disambiguation, statistics, capped graphs, paths;
release cycles as of a date, and bills of materials checked against them.

PostgreSQL is the source of truth; the graphs here are derived per vendor,
cached until the next graph build, and disposable. Start with
:class:`KnowledgeGraph`.

May import ``sql`` only (``search`` and ``kg`` never import each other); ``server``
and notebooks use it.
"""

from kg.analysis import CappedGraph, GraphStatistics
from kg.bom import Bill, Component, read_bill
from kg.components import ComponentCheck, ComponentsReport, Unmatched
from kg.disambiguate import Match, Resolution
from kg.errors import (
    EntityAmbiguous,
    EntityNotFound,
    GraphError,
    GraphFailed,
    InvalidBill,
    InvalidGraphRequest,
    InvalidName,
    ProductAmbiguous,
    ProductNotFound,
    VendorAmbiguous,
    VendorNotFound,
    VersionNotFound,
)
from kg.lifecycle import LifecycleAnswer, RiskEvent
from kg.model import Entity, Relationship
from kg.settings import GraphSettings
from kg.store import KnowledgeGraph
from kg.vendors import CrossVendorLinks, VendorInfo

__all__ = [
    "Bill",
    "CappedGraph",
    "Component",
    "ComponentCheck",
    "ComponentsReport",
    "CrossVendorLinks",
    "Entity",
    "EntityAmbiguous",
    "EntityNotFound",
    "GraphError",
    "GraphFailed",
    "GraphSettings",
    "GraphStatistics",
    "InvalidBill",
    "InvalidGraphRequest",
    "InvalidName",
    "KnowledgeGraph",
    "LifecycleAnswer",
    "Match",
    "ProductAmbiguous",
    "ProductNotFound",
    "Relationship",
    "Resolution",
    "RiskEvent",
    "Unmatched",
    "VendorAmbiguous",
    "VendorInfo",
    "VendorNotFound",
    "VersionNotFound",
    "read_bill",
]
