"""How a long-running Groundwork process sets up Python's cyclic garbage collector once it has started."""

from __future__ import annotations

import gc

# Container allocations between young collections (CPython's default is 700). A request allocates hundreds
# (coroutines, dicts, the scope, headers), so the default collected every few requests, and each
# collection that reached the older generations walked the whole heap. Cyclic garbage now waits for up to
# 50,000 allocations (held longer, not lost), for about a tenth less CPU per request (bench/README.md).
YOUNG_THRESHOLD = 50_000


def settle_after_startup() -> None:
    """Move everything built at start-up out of the collector's sight and collect the young less often.

    Modules, the app and its routes, pydantic schemas: they live as long as the process, and every full
    collection walked them again (`gc.freeze`). Objects made later are collected as usual."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
