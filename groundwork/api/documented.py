"""Input constraints a route documents in its OpenAPI schema without enforcing them at decoding.

The services check these rules and answer 422 `validation_failed` (or the route's own code) naming the
field, on every transport alike; the document states them so a client (or a fuzzer) knows what is
accepted before it asks. Use as `Annotated[str, documented(enum=[...])]`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.params import Parameter

from groundwork.domain.pagination import MAX_LIMIT

# At least one character that is not whitespace: what "non-empty" means for names and texts.
NOT_BLANK = r"\S"
# An absolute http(s) URL: a DNS name or address, no credentials, no fragment, no whitespace (the services
# also resolve the host and refuse private addresses).
HTTP_URL = r"^https?://[A-Za-z0-9.-]+(:[1-9][0-9]{0,4})?(/[^\s#@]*)?$"
# A search query names at least one searchable word (letters or digits), or it is refused.
SEARCHABLE = "[A-Za-z0-9]"


# A list's page size: its range is the pagination rule's (`page_request`), so every transport refuses it alike.
LIMIT = Parameter(default=None, schema_extra={"minimum": 1, "maximum": MAX_LIMIT})


def documented(**schema: Any) -> msgspec.Meta:
    """Metadata that adds `schema` (JSON Schema keywords: `enum`, `maxLength`, ...) to a field's OpenAPI schema."""
    return msgspec.Meta(extra_json_schema={"extra": schema})


def text(max_length: int) -> msgspec.Meta:
    """A non-blank string of at most `max_length` characters."""
    return documented(minLength=1, maxLength=max_length, pattern=NOT_BLANK)
