"""The public surface: sorted, complete, and presented as ``streamkit.X``."""

from __future__ import annotations

import streamkit


def test_all_is_a_sorted_tuple_of_existing_names() -> None:
    assert isinstance(streamkit.__all__, tuple)
    assert list(streamkit.__all__) == sorted(streamkit.__all__)
    for name in streamkit.__all__:
        assert hasattr(streamkit, name)


def test_every_public_name_is_exported() -> None:
    subpackages = {"adapters", "annotations", "integrations", "providers", "serve", "telemetry", "testing"}  # modules
    # The package's pytest plugin (the pytest11 entry point) has pytest rewrite the asserts of
    # the whole distribution, which puts its "@py_builtins" helpers in the module's namespace.
    public = {name for name in vars(streamkit) if not name.startswith(("_", "@"))} - subpackages
    assert public <= set(streamkit.__all__)


def test_classes_present_themselves_as_streamkit() -> None:
    for name in streamkit.__all__:
        value = getattr(streamkit, name)
        if isinstance(value, type):
            assert value.__module__ == "streamkit", name


def test_errors_form_one_tree() -> None:
    for name in ("FramingError", "ProviderProtocolError", "ProviderError", "IncompleteStreamError"):
        assert issubclass(getattr(streamkit, name), streamkit.StreamError)
    assert issubclass(streamkit.HTTPStatusError, streamkit.TransportError)
    assert issubclass(streamkit.UsageError, ValueError)
    assert issubclass(streamkit.StreamError, streamkit.StreamkitError)


def test_values_are_frozen() -> None:
    import dataclasses

    call = streamkit.ToolCall(0, "a", "f", {})
    try:
        call.name = "g"  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("ToolCall is mutable")


def test_the_values_a_framework_author_needs_are_exported() -> None:
    for name in ("CallStarted", "ArgumentsFragment", "CallRef", "Provider", "StreamOptions", "call_id"):
        assert name in streamkit.__all__, name
    assert streamkit.call_id is streamkit.adapters.call_id
    assert streamkit.CallStarted.__module__ == "streamkit"  # the public value, not the stage event
    assert "CallStarted" not in streamkit._events.__all__  # one name per thing: the stage's is CallOpened
