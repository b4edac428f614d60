"""Shared pytest configuration: the --network switch, the `cache` fixture, and the schema check of every JSON
document a test makes the CLI print.

The tests are laid out like the code: tests/<part>/ specifies src/stackresolve/<part> (browse (matrix, show), cli,
detect, doctor, explain, fleet, files, formats (with the lock format), index (with refresh), install, knowledge,
lock (full locks, check), model, request, resolve). tests/cross_cutting/ holds what no one part
owns: one answer across every format (coherence, one_answer), hostile input, the import layers, the JSON schemas,
the README's commands, and plans installed by pip against the real index (network). Shared helpers sit at tests/ (locations,
plan_reading, schema_check); fixtures under tests/fixtures/ with their provenance."""

import pytest


def pytest_addoption(parser):
    parser.addoption(
        "--network",
        action="store_true",
        default=False,
        help="also run tests marked `network` (they talk to the real package index)",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--network"):
        return
    skip = pytest.mark.skip(reason="talks to the network; run with --network")
    for item in items:
        if "network" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def kb():
    """The shipped knowledge base, loaded once for the run (tests that need another define their own)."""
    from stackresolve.knowledge.loader import knowledge

    return knowledge()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private knowledge cache folder for the test (the snapshot is written and read there)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("STACKRESOLVE_CACHE_DIR", str(folder))
    monkeypatch.delenv("STACKRESOLVE_NO_CACHE", raising=False)
    return folder


@pytest.fixture(autouse=True)
def json_documents_follow_their_schemas(monkeypatch):
    """Every JSON document a command prints or writes (-o) in a test validates against its schema in schemas/:
    the output functions of the CLI are wrapped, and the test fails with the schema's complaints."""
    import importlib

    from stackresolve.files import write as files

    cli_app = importlib.import_module("stackresolve.cli.app")  # the module (stackresolve.cli.app is the group)

    from schema_check import document_in, problems

    seen: list[str] = []

    def check(text) -> None:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        doc = document_in(text)
        if doc is not None:
            seen.extend(f"{doc['schema']}: {p}" for p in problems(doc))

    real_stdout, real_file = cli_app.write_stdout, files.write_output

    def write_stdout(text):
        check(text)
        return real_stdout(text)

    def write_output(path, data, *args, **kwargs):
        check(data)
        return real_file(path, data, *args, **kwargs)

    monkeypatch.setattr(cli_app, "write_stdout", write_stdout)
    monkeypatch.setattr(files, "write_output", write_output)
    yield
    if seen:
        pytest.fail("JSON output breaks its schema:\n  " + "\n  ".join(seen[:20]), pytrace=False)
