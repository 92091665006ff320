"""The search text of a session's records, kept compact (no Qt here).

A Python ``str`` per record cost ~380 bytes an entry on the 100k-entry session (38 MB of the
window's memory): most previews hold a non-ASCII character ("…", "→"), which makes the whole string
two bytes a character, plus a 74-byte header. Here the texts of a batch of records are one
zlib-compressed UTF-8 blob with an ``array`` of where each record's text starts: ~40 bytes an entry.

A search decompresses one batch at a time (zlib lets go of the GIL meanwhile) and finds the needle
with ``bytes.find``; a hit maps back to its record through the offsets. UTF-8 keeps substring
matches exact: an encoded needle found in encoded text always starts and ends on character
boundaries (``surrogatepass`` keeps lone surrogates, valid in JavaScript strings, as themselves).

A big session's batches (built by ``search_worker``) live in a :class:`SpillFile` instead: an
unlinked temporary file in the user's cache folder, read back with ``pread`` a batch at a time when
searching. On the 900k-entry, 1 GB session that keeps ~40 MB out of the window's memory; the
bytes sit in the page cache the kernel may drop, and vanish with the process however it ends.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import tempfile
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence

from session_studio.core.priority import yield_to_foreground

__all__ = ["BATCH_RECORDS", "SearchTexts", "SpillFile", "packed_batch", "spilled_batch", "text_batch"]

#: records per compressed batch (what a search decompresses at a time: ~150 KB of text)
BATCH_RECORDS = 1024
#: zlib's fastest level: texts compress ~3× and a batch packs in about a millisecond
_LEVEL = 1
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"


class _Batch:
    """The texts of consecutive records: one compressed blob and where each text starts in it."""

    __slots__ = ("blob", "offsets")

    def __init__(self, texts: Sequence[str]) -> None:
        encoded = [t.encode(_ENCODING, _ERRORS) for t in texts]
        #: offsets[k]..offsets[k + 1] is record k's text in the decompressed blob
        self.offsets = array("I", itertools.accumulate(map(len, encoded), initial=0))
        self.blob = zlib.compress(b"".join(encoded), _LEVEL)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def unpacked(self) -> tuple[bytes, array[int]]:
        """The decompressed texts, one after the other, and where each starts."""
        return zlib.decompress(self.blob), self.offsets

    def texts(self) -> list[str]:
        data, offs = self.unpacked()
        return [data[offs[k] : offs[k + 1]].decode(_ENCODING, _ERRORS) for k in range(len(offs) - 1)]

    def hits(self, needle: bytes) -> Iterator[int]:
        """The records (numbered in the batch) whose text holds ``needle`` (not empty)."""
        data, offs = self.unpacked()
        size = len(needle)
        pos = data.find(needle)
        while pos >= 0:
            k = bisect.bisect_right(offs, pos) - 1
            end = offs[k + 1]
            if pos + size <= end:
                yield k
            # a match that runs into the next record's text is no match; any later one starting
            # in the same record runs further still: go on from the next record
            pos = data.find(needle, end)


class SpillFile:
    """An unlinked temporary file that holds packed batches (a blob, then its offsets' bytes);
    closed when the last batch in it is dropped."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def create(cls, folder: str | os.PathLike[str] | None) -> SpillFile | None:
        """A new one in ``folder`` (made if missing); None where no file can be made there."""
        if folder is None:
            return None
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder, prefix="search-") as fh:  # already unlinked
                return cls(os.dup(fh.fileno()))
        except OSError:
            return None

    def read(self, pos: int, size: int) -> bytes:
        data = os.pread(self.fd, size, pos)
        if len(data) != size:
            raise OSError(f"the search texts' temporary file ends before byte {pos + size}")
        return data

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class _SpilledBatch(_Batch):
    """A batch whose blob and offsets lie in a :class:`SpillFile` (see the module's doc)."""

    __slots__ = ("blob_size", "count", "file", "offsets_size", "pos")

    def __init__(self, file: SpillFile, pos: int, blob_size: int, offsets_size: int, count: int) -> None:
        self.file, self.pos, self.blob_size, self.offsets_size = file, pos, blob_size, offsets_size
        self.count = count

    def __len__(self) -> int:
        return self.count

    def unpacked(self) -> tuple[bytes, array[int]]:
        raw = self.file.read(self.pos, self.blob_size + self.offsets_size)
        offsets = array("I")
        offsets.frombytes(raw[self.blob_size :])
        return zlib.decompress(raw[: self.blob_size]), offsets


def text_batch(texts: Sequence[str]) -> _Batch:
    """The batch of these texts (a whole batch of a SearchTexts is BATCH_RECORDS of them)."""
    return _Batch(texts)


def packed_batch(blob: bytes, offsets: bytes) -> _Batch:
    """A batch from what another process packed: its ``blob`` and its ``offsets`` array's bytes."""
    batch = _Batch.__new__(_Batch)
    batch.blob = blob
    batch.offsets = array("I", offsets)
    if not batch.offsets or batch.offsets[0] != 0:
        raise ValueError("a batch's offsets start at 0")
    return batch


def spilled_batch(file: SpillFile, pos: int, blob_size: int, offsets_size: int, count: int) -> _Batch:
    """A batch another process wrote to ``file`` at ``pos``: ``blob_size`` bytes of compressed texts,
    then the ``offsets_size`` bytes of its ``count + 1`` offsets."""
    if min(pos, blob_size) < 0 or count < 0 or offsets_size != (count + 1) * array("I").itemsize:
        raise ValueError("a spilled batch's sizes do not fit together")
    return _SpilledBatch(file, pos, blob_size, offsets_size, count)


class SearchTexts:
    """The (lowercased) search texts of records 0 … len - 1, immutable: ``extended`` makes a new
    one that shares the full batches of this one (a worker extends it while the GUI thread
    searches the old one)."""

    __slots__ = ("_batches", "_count", "_starts")

    def __init__(self, batches: Iterable[_Batch] = ()) -> None:
        self._batches = tuple(batches)
        self._starts = list(itertools.accumulate((len(b) for b in self._batches), initial=0))
        self._count = self._starts[-1]

    def __len__(self) -> int:
        return self._count

    def extended(self, texts: Iterable[str]) -> SearchTexts:
        """These texts followed by ``texts`` (the next records'), in batches of BATCH_RECORDS: a last
        batch not full yet takes the first of them (appends one entry at a time stay few batches)."""
        batches = list(self._batches)
        pending: list[str] = []
        if batches and len(batches[-1]) < BATCH_RECORDS:
            pending = batches.pop().texts()
        for text in texts:
            pending.append(text)
            if len(pending) == BATCH_RECORDS:
                batches.append(_Batch(pending))
                pending = []
        if pending:
            batches.append(_Batch(pending))
        return SearchTexts(batches)

    def truncated(self, count: int) -> SearchTexts:
        """The texts of the first ``count`` records."""
        if count >= self._count:
            return self
        k = bisect.bisect_right(self._starts, count) - 1
        keep = self._batches[:k]
        rest = count - self._starts[k]
        return SearchTexts(keep).extended(self._batches[k].texts()[:rest] if rest else ())

    def __getitem__(self, record: int) -> str:
        if not 0 <= record < self._count:
            raise IndexError("search text index out of range")
        k = bisect.bisect_right(self._starts, record) - 1
        return self._batches[k].texts()[record - self._starts[k]]

    def __iter__(self) -> Iterator[str]:
        for batch in self._batches:
            yield from batch.texts()

    def matching(self, needle: str) -> Iterator[int]:
        """The records whose text holds ``needle``, in record order (what ``needle in text`` says)."""
        if not needle:
            yield from range(self._count)
            return
        encoded = needle.encode(_ENCODING, _ERRORS)
        for start, batch in zip(self._starts, self._batches, strict=False):
            yield_to_foreground()
            for k in batch.hits(encoded):
                yield start + k
