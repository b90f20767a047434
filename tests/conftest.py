"""Hypothesis profiles, and where the tests' temporary files go. The helpers the tests share
are in tests/support/.

Profiles (environment variable HYPOTHESIS_PROFILE): ``default`` (about 100
examples), ``ci`` (400, prints reproduction blobs), ``expensive`` (2000) and
``sanitized`` (30: .ci/sanitized.sh's run against the ASan + UBSan build, where
each example costs several times as much and the point is every C path under
the sanitizers, which the normal build's runs check example by example).
Without the variable, every test takes ``default``, except the differential tests
(``support.profiles.differential()``), which take ``ci`` when CI is set.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from support.profiles import NAMED_PROFILE
from support.scratch import use_memory_for_temporary_files

settings.register_profile("default", max_examples=100, deadline=None)
for name, examples in {"ci": 400, "sanitized": 30, "expensive": 2000}.items():
    settings.register_profile(
        name,
        max_examples=examples,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
# A profile named in HYPOTHESIS_PROFILE applies to every test. Otherwise every test takes
# "default", but the differential tests (the C core against the model, decorated with
# differential()) take "ci" in CI (which sets CI=true): they are where more examples find most.
settings.load_profile(NAMED_PROFILE or "default")

# Temporary files (tmp_path, tempfile, and the programs the tests start) go to a memory file
# system when the user named no TMPDIR: the writer tests fsync thousands of small logs, and
# on a disk each fsync waits for the device (support/scratch.py says when it applies).
use_memory_for_temporary_files()
