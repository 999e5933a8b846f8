"""The measurement protocol's frames (src/runtime/MeasureProtocol.h), as the daemon sends them:
uint32 kind | uint64 n | n bytes of JSON | uint64 m | m bytes of data, in the machine's order."""
import json
import os
import struct

SETUP, RUN, TIME, EXIT, BUILT, REPLY = 1, 2, 3, 4, 5, 100


def _read_exactly(fd, n):
    parts = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_frame(fd):
    """(kind, header dict, data) or None when the other end closed."""
    head = _read_exactly(fd, 12)
    if head is None:
        return None
    kind, n = struct.unpack("=IQ", head)
    text = _read_exactly(fd, n)
    size = _read_exactly(fd, 8)
    if text is None or size is None:
        return None
    (m,) = struct.unpack("=Q", size)
    data = _read_exactly(fd, m) if m else b""
    if data is None:
        return None
    return kind, json.loads(text.decode()), data


def write_frame(fd, kind, header, data=b""):
    text = json.dumps(header).encode()
    buf = struct.pack("=IQ", kind, len(text)) + text + struct.pack("=Q", len(data)) + data
    view = memoryview(buf)
    while view:
        view = view[os.write(fd, view):]
