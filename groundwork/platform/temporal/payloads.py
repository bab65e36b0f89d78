"""The data converter every Groundwork process gives Temporal: the SDK's pydantic one, with one cache of
type adapters for the whole process.

The pydantic converter caches a `TypeAdapter` per type on the converter instance, but the worker builds a
new converter for every workflow activation (`_CommandAwareDataConverter.create`), so each activation
started with an empty cache and rebuilt the adapter (a pydantic schema generation) for every payload it
decoded: about 4 % of the worker's CPU under load. Payloads are unchanged (`json/plain`, same JSON).
"""

from __future__ import annotations

import functools
from typing import Any

import temporalio.api.common.v1
from pydantic import TypeAdapter
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

# Adapters are immutable once built; lru_cache is safe across the worker's activation threads.
_type_adapter = functools.lru_cache(maxsize=1024)(TypeAdapter)


class SharedAdaptersJSONConverter(PydanticJSONPlainPayloadConverter):
    """Pydantic JSON payloads, decoded with the process-wide adapter cache."""

    def from_payload(self, payload: temporalio.api.common.v1.Payload, type_hint: type | None = None) -> Any:
        """Validate the payload's JSON as `type_hint` (anything when there is none)."""
        hint: Any = type_hint if type_hint is not None else Any
        try:
            hash(hint)
        except TypeError:  # an unhashable hint cannot be cached
            return TypeAdapter(hint).validate_json(payload.data)
        return _type_adapter(hint).validate_json(payload.data)


# The encodings' converters hold no state of their own: every payload converter of the process shares them (the
# worker makes one per activation, and building the pydantic one compiles a serializer).
_ENCODINGS = tuple(
    SharedAdaptersJSONConverter() if isinstance(converter, JSONPlainPayloadConverter) else converter
    for converter in DefaultPayloadConverter.default_encoding_payload_converters
)


class GroundworkPayloadConverter(CompositePayloadConverter):
    """The default encodings, with JSON through pydantic (as `PydanticPayloadConverter`) and shared adapters."""

    def __init__(self) -> None:
        super().__init__(*_ENCODINGS)


data_converter = DataConverter(payload_converter_class=GroundworkPayloadConverter)
