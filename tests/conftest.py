from __future__ import annotations

import os
import time
from collections.abc import Iterator
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from .helpers import Clock
from .server import LoopbackServer

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A long local fuzzing run: HYPOTHESIS_PROFILE=fuzz pytest tests/test_fuzz.py
settings.register_profile(
    "fuzz", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
# LiteLLM fetches its model cost map from the network when it is imported, unless told to read
# its bundled copy: the tests run offline, whichever of them imports it first.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Haystack sends usage telemetry from its pipelines unless told not to.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")


# -- the transport tests: a real HTTP server on loopback, and both async backends --------------


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """An HTTP/1.1 server on 127.0.0.1 and a free port, for this test alone."""
    running = LoopbackServer()
    yield running
    running.close()


@pytest.fixture(scope="module")
def upstream() -> Iterator[LoopbackServer]:
    """The loopback server as the upstream of the proxy tests (streamkit serve), one per module."""
    running = LoopbackServer()
    yield running
    running.close()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``@pytest.mark.anyio`` test runs under asyncio and under trio."""
    return str(request.param)


@pytest.fixture(params=["httpx", "httpx2"])
def http(request: pytest.FixtureRequest) -> ModuleType:
    """The HTTP library of the test's client and responses: every HTTP test runs with both."""
    module: ModuleType = pytest.importorskip(str(request.param))
    return module


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """``time.time_ns`` replaced by a clock the test sets: times then known exactly."""
    fake = Clock()
    monkeypatch.setattr(time, "time_ns", fake)
    return fake
