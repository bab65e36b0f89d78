"""The process's data converter: the same payloads as the SDK's pydantic converter, with adapters built once."""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter

from groundwork.platform.temporal import payloads as temporal_payloads
from groundwork.platform.temporal.payloads import GroundworkPayloadConverter, data_converter
from groundwork.workflows.enhancement_contract import ActionResult, EnhancementRunInput


async def test_payloads_are_byte_for_byte_those_of_the_pydantic_converter_and_read_back_equal() -> None:
    value = EnhancementRunInput("wie_1", "ws_1", "wi_1", 3600, datetime(2026, 11, 24, 8, 0, tzinfo=UTC), "running", 2)
    ours = await data_converter.encode([value, {"a": [1, 2]}, None, "text"])
    theirs = await pydantic_data_converter.encode([value, {"a": [1, 2]}, None, "text"])
    assert [(p.metadata["encoding"], p.data) for p in ours] == [(p.metadata["encoding"], p.data) for p in theirs]
    decoded = await data_converter.decode(ours, [EnhancementRunInput, dict, type(None), str])
    assert decoded == [value, {"a": [1, 2]}, None, "text"]
    # Payloads written by the SDK's converter (histories recorded before) read back the same.
    assert await data_converter.decode(theirs, [EnhancementRunInput, dict, type(None), str]) == decoded


async def test_a_new_converter_per_activation_reuses_the_adapters_already_built() -> None:
    result = ActionResult("design", ["draft_1"], ["art_1"], "ready_for_review")
    payloads = await data_converter.encode([result])
    # The worker builds a converter like this for each workflow activation.
    await DataConverter(payload_converter_class=GroundworkPayloadConverter).decode(payloads, [ActionResult])
    built = temporal_payloads._type_adapter.cache_info().misses
    for _ in range(3):
        fresh = DataConverter(payload_converter_class=GroundworkPayloadConverter)
        assert await fresh.decode(payloads, [ActionResult]) == [result]
    assert temporal_payloads._type_adapter.cache_info().misses == built  # no adapter built again
