"""_core._tail_end, the end of a growing log's last complete record found from its last
blocks (csrc/core/log_tail.h), against a Reader following the same file: after every
growth step, the boundary is the position the Reader reaches, in every dialect."""

from __future__ import annotations

import io
from pathlib import Path

import leveldb_log
import pytest
from hypothesis import given
from hypothesis import strategies as st
from leveldb_log import _core
from support.profiles import differential

BLOCK = leveldb_log.BLOCK_SIZE

#: Record lengths: small ones, and ones that fill a block to its trailer or span blocks.
LENGTHS = st.one_of(
    st.integers(0, 300),
    st.integers(BLOCK - 40, BLOCK + 40),
    st.integers(BLOCK, 3 * BLOCK),
)
#: (dialect, log_number) pairs: with a number, the Writer writes recyclable headers (11
#: bytes; Pebble's ends the log with its trailer).
DIALECTS = st.sampled_from([("leveldb", None), ("rocksdb", None), ("rocksdb", 7), ("pebble", 3)])


def written(dialect: str, log_number: int | None, lengths: list[int]) -> bytes:
    """A log of records of these lengths, as the Writer writes it."""
    out = io.BytesIO()
    recycle = {"recycle": True} if dialect == "rocksdb" and log_number is not None else {}
    with leveldb_log.Writer(out, dialect=dialect, log_number=log_number, **recycle) as w:
        for i, n in enumerate(lengths):
            w.write(bytes([i % 251]) * n)
    return out.getvalue()


def cut_points(size: int, drawn: list[int]) -> list[int]:
    """The drawn cuts, and every offset within 20 bytes of a block boundary."""
    near = {b + d for b in range(0, size + BLOCK, BLOCK) for d in range(-20, 21)}
    return sorted({c for c in near | set(drawn) if 0 <= c <= size})


def follow(path: Path, data: bytes, cuts: list[int], dialect: str, number: int | None) -> None:
    """Grows the file to each cut in turn; checks the boundary against the Reader there."""
    path.write_bytes(b"")
    with (
        open(path, "ab", buffering=0) as grow,
        open(path, "rb") as probe,
        leveldb_log.Reader(path, dialect=dialect, log_number=number) as reader,
    ):
        size = 0
        for cut in cuts:
            grow.write(data[size:cut])
            size = cut
            for _ in reader:
                pass
            assert _core._tail_end(probe, size, dialect, number) == reader.position, cut


@differential(0.25)
@given(
    dialect=DIALECTS,
    lengths=st.lists(LENGTHS, min_size=1, max_size=8),
    drawn=st.lists(st.integers(0, 10 * BLOCK), max_size=40),
)
def test_boundary_is_where_a_following_reader_stands(
    tmp_path_factory: pytest.TempPathFactory,
    dialect: tuple[str, int | None],
    lengths: list[int],
    drawn: list[int],
) -> None:
    data = written(*dialect, lengths)
    path = tmp_path_factory.mktemp("tail") / "grow.log"
    follow(path, data, cut_points(len(data), drawn), *dialect)


def test_every_prefix_of_a_log_in_each_dialect(tmp_path: Path) -> None:
    """Every prefix of one log, each dialect: a record that leaves a trailer (in LevelDB's
    dialect; fragments in the others'), one of three blocks, an empty one."""
    lengths = [5, BLOCK - 7 - 12 - 3, 1, 2 * BLOCK + 9, 0]
    for dialect, number in [("leveldb", None), ("rocksdb", 7), ("pebble", 3)]:
        data = written(dialect, number, lengths)
        follow(tmp_path / f"{dialect}.log", data, list(range(len(data) + 1)), dialect, number)


def test_recycled_file_ends_where_the_new_log_does(tmp_path: Path) -> None:
    """A recycled file (an older log's records after the new log's): the boundary is the
    new log's end, where its Reader stops (in the modes where an older log's record ends
    the log), with the number given, in the file's name, or taken from its first header."""
    old = written("rocksdb", 7, [3000] * 40)
    new = written("rocksdb", 8, [100, 2 * BLOCK, 50])
    path = tmp_path / "000008.log"
    path.write_bytes(new + old[len(new) :])
    reader = leveldb_log.Reader(path, dialect="rocksdb", log_number=8, recovery="tolerate_tail")
    with open(path, "rb") as f, reader as r:
        assert [len(x) for x in r] == [100, 2 * BLOCK, 50]
        assert _core._tail_end(f, len(old), "rocksdb", 8) == r.position == len(new)
        assert _core._tail_end(f, len(old), "rocksdb") == len(new)
        assert _core._tail_end(f, len(old), "rocksdb", None, path) == len(new)  # in the name
        # Named as the older log, the file ends where that log's last record does.
        assert _core._tail_end(f, len(old), "rocksdb", None, tmp_path / "7.log") == len(old)


def test_a_record_not_written_yet_is_not_complete(tmp_path: Path) -> None:
    """A whole header before payload bytes still zeros (a writer that extends its file
    before filling it): the boundary stays before the record while checksums are verified."""
    data = bytearray(written("leveldb", None, [10, 20]))
    data[17 + 7 :] = bytes(20)
    path = tmp_path / "x.log"
    path.write_bytes(data)
    with open(path, "rb") as f:
        assert _core._tail_end(f, len(data), "leveldb") == 17
        assert _core._tail_end(f, len(data), "leveldb", None, None, True) == 17
        assert _core._tail_end(f, len(data), "leveldb", None, None, False) == len(data)
        with pytest.raises(TypeError, match="verify_checksums"):
            _core._tail_end(f, len(data), "leveldb", None, None, "no")  # type: ignore[arg-type]


def test_bad_arguments(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(written("leveldb", None, [10]))
    with open(path, "rb") as f:
        with pytest.raises(ValueError, match="dialect"):
            _core._tail_end(f, 17, "nope")
        with pytest.raises(ValueError, match="size"):
            _core._tail_end(f, -1, "leveldb")
        with pytest.raises(TypeError):
            _core._tail_end(f, 17)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        _core._tail_end(f, 17, "leveldb")  # closed
