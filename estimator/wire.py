"""msgpack bytes of what the project's parts exchange: the node's published messages and control
replies, the log's records, the demo's files, the readings a publisher sends. One packing (text as
str, bytes as bin), so that what one part writes the others read alike; reading back, with the
depth bound the node needs against hostile input, is sensors.messages.unpack."""

from __future__ import annotations

from typing import Any

import msgpack


def pack(value: Any) -> bytes:
    """msgpack bytes of ``value`` (maps, lists, text, bytes, numbers, booleans, None)."""
    return msgpack.packb(value, use_bin_type=True)
