"""Shared pytest configuration."""

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
