"""Whether the real engines can run here: the engine tests (tests/spark/, tests/ray/) skip,
saying why, only where one cannot be installed."""

from __future__ import annotations

import importlib.util
import os
import shutil

#: JVM options of the tests' Spark processes: C1, the quick compiler, only. The tests run
#: small jobs, for which the optimising compiler's work was a third of the Spark tests' CPU
#: time (bench/README.md, "CI time"); what the tests check does not depend on it.
SPARK_TEST_JVM_OPTS = "-XX:TieredStopAtLevel=1"


def spark_missing() -> str | None:
    """Why Spark cannot run here, or None."""
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'leveldb-log[spark]')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime for Spark (Debian: apt-get install openjdk-17-jre-headless)"
    return None


def ray_missing() -> str | None:
    """Why Ray cannot run here, or None."""
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'leveldb-log[ray]')"
    return None
