"""The shared fixtures (``tests/fixtures/``), loaded for every test as pytest plugins."""

pytest_plugins = [
    "tests.fixtures.database",
    "tests.fixtures.corpus",
    "tests.fixtures.kg",
    "tests.fixtures.search",
    "tests.fixtures.server",
    "tests.fixtures.models",
    "tests.fixtures.lifecycle",
]
