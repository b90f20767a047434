"""What the tests share: the reference model, the damage they do and its oracle, ways to
read and run (see each module's docstring). Imported as ``support.<module>``: pyproject.toml
puts tests/ on sys.path (pytest's ``pythonpath``)."""
