"""Type stubs for the C extension leveldb_log._core."""

import os
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Literal, Protocol

from typing_extensions import Buffer

from leveldb_log._errors import Corruption

BLOCK_SIZE: int
HEADER_SIZE: int
DEFAULT_BUFFER_SIZE: int
crc32c_implementation: str
crc32c_implementations: tuple[str, ...]
RECORD_TYPES: dict[int, str]
RECOVERY_MODES: tuple[str, ...]

StrPath = str | os.PathLike[str]
Recovery = Literal["skip", "tolerate_tail", "point_in_time", "absolute"]

class _WritableFile(Protocol):
    def write(self, data: bytes, /) -> int | None: ...

class _ReadableFile(Protocol):
    def readinto(self, buffer: memoryview, /) -> int | None: ...

def crc32c(data: Buffer, value: int = 0) -> int: ...
def mask_crc(crc: int, /) -> int: ...
def unmask_crc(masked: int, /) -> int: ...
def _scan_block(
    block: Buffer, final: bool, verify_checksums: bool, /
) -> list[
    tuple[
        int,
        Literal["record", "trailer", "zero", "garbage", "truncated"],
        int | None,
        int,
        bool | None,
        str | None,
    ]
]: ...

class Writer:
    def __init__(
        self,
        target: StrPath | _WritableFile,
        mode: Literal["w", "a", "x"] = "w",
        *,
        buffering: int = -1,
        closefd: bool = False,
    ) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def mode(self) -> str: ...
    @property
    def name(self) -> object: ...
    def write(self, data: Buffer, /) -> int: ...
    def write_many(self, records: Iterable[Buffer], /) -> int: ...
    def flush(self) -> None: ...
    def sync(self) -> None: ...
    def tell(self) -> int: ...
    def close(self) -> None: ...
    def __enter__(self) -> Writer: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None: ...

class Reader(Iterator[bytes]):
    def __init__(
        self,
        source: StrPath | Buffer | _ReadableFile,
        *,
        recovery: Recovery = "skip",
        verify_checksums: bool = True,
        start: int = 0,
        end: int | None = None,
        on_corruption: Callable[[Corruption], object] | None = None,
    ) -> None: ...
    @property
    def last_record_offset(self) -> int | None: ...
    @property
    def dropped_bytes(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def recovery(self) -> Recovery: ...
    @property
    def verify_checksums(self) -> bool: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int | None: ...
    @property
    def position(self) -> int | None: ...
    @property
    def _blocks_in_place(self) -> int: ...
    def _restore(self, last: int | None, dropped: int, finished: bool, /) -> None: ...
    def __iter__(self) -> Reader: ...
    def __next__(self) -> bytes: ...
    def close(self) -> None: ...
    def __enter__(self) -> Reader: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None: ...
