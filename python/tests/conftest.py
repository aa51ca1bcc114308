# SPDX-License-Identifier: Apache-2.0
import os
import pathlib

from hypothesis import HealthCheck, settings

# make test-python has a budget of 4 minutes with the install; the
# differential tests draw up to 64 KiB per example. KUAI_HYPOTHESIS_EXAMPLES
# raises it for a longer run.
settings.register_profile(
    "kuai",
    max_examples=int(os.environ.get("KUAI_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=False,
)
settings.load_profile("kuai")

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "vectors"
