"""The file layer every engine adapter (Spark, Ray, Dask) stands on, one job per module:

- `_listing`: the files paths name, with size, modification time and partition values,
  under the convention of the engine that asks (``spark``, ``ray``, ``dask``);
- `_plan`: byte ranges of those files, from the listing's sizes, packed into tasks;
- `_read`: the reading of ranges into Arrow batches, with one damage summary per file
  and the corruption reports as rows;
- `_publish`: written logs staged under hidden names, renamed into place, the folder
  synced, the staging removed on abort.

Nothing here imports an engine: the adapters import this layer, never one another.
"""
