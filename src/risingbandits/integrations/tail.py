"""The end of a command's output, read as it streams, in memory that does not grow with it.

A training command may print gigabytes (a progress line per batch); the driver needs only its
last non-empty line (the score) and a little of the end for an error message. :class:`Tail`
keeps exactly that: the last non-empty line, up to :data:`LINE_LIMIT` bytes (a longer line is no
score: it is kept as its beginning and ``...``), and the last :data:`TAIL_BYTES` bytes. Each
chunk is searched from its end, so many short lines cost no Python loop.
"""

from __future__ import annotations

LINE_LIMIT = 4096
"""Bytes of a line kept; a line longer than this is never a score."""
TAIL_BYTES = 4096
"""Bytes of the end of the output kept for error messages."""
LONG = "..."
"""Appended to the kept beginning of a line longer than :data:`LINE_LIMIT`."""


class Tail:
    """Fed chunks of one stream with :meth:`feed`; :meth:`last_line` and :meth:`text` at any
    time."""

    def __init__(self) -> None:
        self._end = b""
        self._last: bytes | None = None  # the last finished non-empty line (LINE_LIMIT + 1 max)
        self._partial = bytearray()  # the unfinished line (LINE_LIMIT + 1 bytes max)
        self._blank = True  # the unfinished line holds only whitespace so far

    def feed(self, chunk: bytes) -> None:
        self._end = chunk[-TAIL_BYTES:] if len(chunk) >= TAIL_BYTES else self._keep_end(chunk)
        cut = chunk.rfind(b"\n")
        if cut < 0:
            self._extend(chunk)
            return
        first = chunk.find(b"\n")
        self._extend(chunk[:first])
        self._finish()
        whole = chunk[first + 1 : cut]  # the lines that start and end in this chunk
        end = len(whole.rstrip())
        if end:
            start = whole.rfind(b"\n", 0, end) + 1
            stop = whole.find(b"\n", end)
            self._last = whole[start : len(whole) if stop < 0 else stop][: LINE_LIMIT + 1]
        self._extend(chunk[cut + 1 :])

    def _keep_end(self, chunk: bytes) -> bytes:
        return (self._end + chunk)[-TAIL_BYTES:]

    def _extend(self, piece: bytes) -> None:
        """Add ``piece`` to the unfinished line (its beginning only, past the limit)."""
        if piece and self._blank and not piece.isspace():
            self._blank = False
        room = LINE_LIMIT + 1 - len(self._partial)
        if room > 0:
            self._partial += piece[:room]

    def _finish(self) -> None:
        if not self._blank:
            self._last = bytes(self._partial)
        self._partial.clear()
        self._blank = True

    def last_line(self) -> str | None:
        """The last non-empty line, stripped (the unfinished one counts), None if there is
        none; a line over :data:`LINE_LIMIT` bytes is its beginning and :data:`LONG`."""
        line = self._last if self._blank else bytes(self._partial)
        if line is None:
            return None
        text = line[:LINE_LIMIT].decode(errors="replace").strip()
        return text + LONG if len(line) > LINE_LIMIT else text

    def text(self) -> str:
        """The last :data:`TAIL_BYTES` bytes, decoded (a character cut in two is replaced)."""
        return self._end.decode(errors="replace")
