"""One source for configuration: --help environment sections and docs/configuration.md
come from the settings models."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings

from extraction.cli import _parser as extraction_parser
from extraction.settings import ExtractionSettings
from kg.cli import _parser as kg_parser
from kg.settings import GraphSettings
from search.embedder import EmbeddingSettings
from search.settings import SearchSettings
from server import configuration
from server.cli import _parser as server_parser
from server.settings import ServerSettings
from sql.settings import DatabaseSettings, environment_help, environment_rows


def test_committed_configuration_doc_matches_the_settings_models() -> None:
    current = configuration.DOC.read_text(encoding="utf-8")
    assert configuration.updated(current) == current, (
        "docs/configuration.md is out of date: run python -m server.configuration"
    )
    assert configuration.main(["--check"]) == 0


def test_the_check_fails_on_a_table_left_behind() -> None:
    current = configuration.DOC.read_text(encoding="utf-8")
    stale = current.replace("| `KB_WORKER_LEASE_S` | `300` |", "| `KB_WORKER_LEASE_S` | `60` |")
    assert stale != current
    assert configuration.updated(stale) != stale
    with pytest.raises(ValueError, match="markers"):
        configuration.updated("no markers here")


def test_every_model_variable_is_documented_once() -> None:
    models = (
        DatabaseSettings,
        ExtractionSettings,
        EmbeddingSettings,
        SearchSettings,
        GraphSettings,
        ServerSettings,
    )
    rows = environment_rows(*models)
    names = [name for name, _, _ in rows]
    assert len(names) == len(set(names))
    assert all(meaning for _, _, meaning in rows), [n for n, _, m in rows if not m]
    doc = configuration.render()
    for name in names:
        assert f"| `{name}` |" in doc


@pytest.mark.parametrize(
    ("parser", "models"),
    [
        (extraction_parser, (DatabaseSettings, ExtractionSettings, EmbeddingSettings)),
        (kg_parser, (DatabaseSettings, GraphSettings)),
        (
            server_parser,
            (ServerSettings, DatabaseSettings, SearchSettings, GraphSettings, EmbeddingSettings),
        ),
    ],
)
def test_help_lists_every_variable_of_its_models(
    parser: Callable[[], argparse.ArgumentParser], models: tuple[type[BaseSettings], ...]
) -> None:
    text = parser().format_help()
    for name, default, _ in environment_rows(*models):
        assert f"  {name}" in text
        assert f"[{default}]" in text


def test_environment_help_shows_defaults_and_wraps() -> None:
    class Demo(BaseSettings):
        plain: int = Field(default=3, validation_alias="KB_DEMO_PLAIN", description="a number")
        worded: str | None = Field(
            default=None,
            validation_alias="KB_DEMO_WORDED",
            description="a long meaning " * 12,
            json_schema_extra={"shown_default": "computed at start"},
        )
        unset: str | None = Field(default=None, validation_alias="KB_DEMO_UNSET", description="x")
        internal: int = Field(default=1, description="no environment variable")

    text = environment_help(Demo)
    assert "  KB_DEMO_PLAIN   a number [3]" in text
    assert "[computed at start]" in text
    assert "KB_DEMO_UNSET   x [unset]" in text
    assert "no environment variable" not in text
    assert max(len(line) for line in text.splitlines()) <= 96
