"""Fixtures of the outsider suite: what an integrator has, and nothing of ours.

``api`` is the API compiled from ``proto/`` alone (as a client in any language would
generate it), once for the whole run; ``server`` a ``glintwick serve`` subprocess on
free ports (a module that needs other options defines its own ``server``); ``client``
a gRPC channel to it through the compiled stubs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.outsider import OutsiderApi, OutsiderClient, Served, served


@pytest.fixture(scope="session")
def api(tmp_path_factory: pytest.TempPathFactory) -> OutsiderApi:
    return OutsiderApi.compiled(tmp_path_factory.mktemp("outsider"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served(tmp_path_factory.mktemp("server"), "--no-bots") as running:
        yield running


@pytest.fixture
def client(api: OutsiderApi, server: Served) -> Iterator[OutsiderClient]:
    with OutsiderClient(api, server.grpc_target) as opened:
        yield opened
