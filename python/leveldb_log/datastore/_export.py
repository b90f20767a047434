"""read_export: the entities of an export folder, metadata file or output file."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from leveldb_log import _datastore
from leveldb_log._core import Reader
from leveldb_log._errors import Corruption, CorruptionError, CorruptionWarning
from leveldb_log.datastore._metadata import OVERALL, PER_KIND, layout
from leveldb_log.datastore._values import Entity

__all__ = ["EntityDecodeError", "Export", "read_export"]


class EntityDecodeError(ValueError):
    """A record of an output file that is not an EntityProto.

    Attributes
      path: the output file; offset: the record's offset in it; reason: what is wrong.
    """

    def __init__(self, path: str, offset: int, reason: str) -> None:
        super().__init__(f"{path}: the record at offset {offset} is {reason}")
        self.path, self.offset, self.reason = path, offset, reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.offset, self.reason))


def _strings(value: Collection[str] | str | None, what: str) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset([value])
    chosen = frozenset(value)
    if not all(isinstance(v, str) for v in chosen):
        raise TypeError(f"{what} must be str values")
    return chosen


class Export:
    """The entities of an export, read as they are iterated (see read_export).

    Attributes
      files: the output files, in the order they are read.
      expected: the number of entities the overall metadata states, or None.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        kinds: Collection[str] | str | None = None,
        namespaces: Collection[str] | str | None = None,
        on_corruption: Callable[[Corruption], object] | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        if on_corruption is not None and not callable(on_corruption):
            raise TypeError("on_corruption must be callable or None")
        self.path = os.fspath(path)
        self._kinds = _strings(kinds, "kinds")
        self._namespaces = _strings(namespaces, "namespaces")
        self._on_corruption = on_corruption
        self._storage_options = dict(storage_options) if storage_options is not None else None
        self.files, self.expected = layout(self.path, self._storage_options)
        if self.files == [self.path]:  # no metadata: the path itself is the output file
            self._check_output_file()

    def __repr__(self) -> str:
        return f"<Export {self.path!r}: {len(self.files)} output files>"

    def __iter__(self) -> Iterator[Entity]:
        for path in self.files:
            yield from self.read_file(path)

    def _check_output_file(self) -> None:
        """Refuse at once a path named as an output file that is none: it does not exist
        (FileNotFoundError naming it), it holds damage and no record (a text file, say), or
        its first record is no EntityProto. Damage in a real output file is left to the read,
        which reports it; an empty output file holds no entities."""
        damage: list[Corruption] = []
        options: dict[str, Any] = {"on_corruption": damage.append}
        if self._storage_options is not None:
            options["storage_options"] = self._storage_options
        with warnings.catch_warnings(record=True) as warned:  # the read reports them
            warnings.simplefilter("always", CorruptionWarning)
            with Reader(self.path, **options) as reader:
                first = next(iter(reader), None)
                offset = reader.last_record_offset or 0
        if first is None and (damage or any(w.category is CorruptionWarning for w in warned)):
            raise ValueError(
                f"{self.path}: not a Firestore/Datastore export: expected an export folder, "
                f"an *{OVERALL} or *{PER_KIND} file, or an output-N file (a log of "
                "EntityProto records), and this holds no record of LevelDB's log format"
            )
        if first is not None:
            try:
                _datastore.decode(first)
            except ValueError as e:
                reason = f"{e} (an output-N file of an export is a log of EntityProto records)"
                raise EntityDecodeError(self.path, offset, reason) from None

    def _reader(self, path: str, start: int = 0, end: int | None = None) -> Reader:
        options: dict[str, Any] = {"start": start, "end": end}
        if self._on_corruption is not None:
            options["on_corruption"] = self._on_corruption
        if self._storage_options is not None:
            options["storage_options"] = self._storage_options
        return Reader(path, **options)

    def read_file(self, path: str, start: int = 0, end: int | None = None) -> Iterator[Entity]:
        """The entities of one output file (of records whose first header lies in
        [start, end)), filtered by kinds and namespaces."""
        decode, kinds, namespaces = _datastore.decode, self._kinds, self._namespaces
        with self._reader(path, start, end) as reader:
            for record in reader:
                try:
                    entity = decode(record)
                except ValueError as e:
                    offset = reader.last_record_offset
                    raise EntityDecodeError(path, offset or 0, str(e)) from None
                key = entity.key
                if kinds is not None and key.kind not in kinds:
                    continue
                if namespaces is not None and key.namespace not in namespaces:
                    continue
                yield entity

    def to_arrow(self) -> Any:
        """The entities as a pyarrow.Table (needs pyarrow: pip install
        'leveldb-log[arrow]'): a ``__key__`` struct column and one column per property
        name; docs/datastore.md says how each value type maps."""
        from leveldb_log.datastore import _arrow

        _arrow._pyarrow()  # ImportError naming the extra before any reading
        if self._kinds is not None or self._namespaces is not None:
            return _arrow.table(self)
        with _arrow._no_gc():
            decoded = self._columns()
        return _arrow.columns_table(decoded)

    def _columns(self) -> Any:
        """Every record decoded by _datastore.decode_columns (no object per entity)."""
        at: list[tuple[str, Reader]] = []

        def records() -> Iterator[bytes]:
            for path in self.files:
                with self._reader(path) as reader:
                    at[:] = [(path, reader)]
                    yield from reader

        try:
            return _datastore.decode_columns(records())
        except CorruptionError:
            raise
        except ValueError as e:
            if not at:
                raise
            path, reader = at[0]
            raise EntityDecodeError(path, reader.last_record_offset or 0, str(e)) from None

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The table of to_arrow() as an Arrow C stream: pyarrow.table(export),
        polars.DataFrame(export) and DuckDB read an export through it."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)


def read_export(
    path: str | os.PathLike[str],
    *,
    kinds: Collection[str] | str | None = None,
    namespaces: Collection[str] | str | None = None,
    on_corruption: Callable[[Corruption], object] | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> Export:
    """The entities of a Firestore or Datastore export.

    Arguments
      path: an export folder holding one ``*.overall_export_metadata``; that metadata file;
        a per-kind ``*.export_metadata`` file; or one ``output-N`` file. A local path or an
        fsspec URL (s3://, gcs://, memory://...).
      kinds, namespaces: only entities whose key has one of these kinds / namespaces ("" is
        the default namespace); None for all.
      on_corruption: None, or a callable given a leveldb_log.Corruption for each damaged
        stretch skipped (else a CorruptionWarning, as leveldb_log.Reader reports).
      storage_options: for a URL, the fsspec file system's options.

    Returns
      An Export: iterate it for Entity objects (the files the metadata lists, in its
      order, each in record order); to_arrow() or __arrow_c_stream__ for a table.

    Raises
      The call itself checks what path names, before any entity is asked for:
      FileNotFoundError, OSError: path does not exist, or a metadata file cannot be read.
      ValueError: the folder holds no (or several) overall metadata; a metadata file is
        malformed; a file that is no metadata is no output file either (it holds damage
        and no record). EntityDecodeError (a ValueError): the first record of a file
        given as an output file is no EntityProto.
      From iteration: OSError for an output file the metadata lists that cannot be read;
        EntityDecodeError for a record that is not an EntityProto, naming the file and the
        record's offset, after the entities before it.
      TypeError: an argument of the wrong type.
    """
    return Export(
        path,
        kinds=kinds,
        namespaces=namespaces,
        on_corruption=on_corruption,
        storage_options=storage_options,
    )
