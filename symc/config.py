"""symc.config: the knobs of the driver, read from the environment once and settable in code.

    symc.config.cache_size_limit = 16        # entries per compiled function before eager
    SYMC_LOGS=guards,recompiles,graph        # log topics (see symc.logs)
    SYMC_CACHE_DIR=/tmp/symc                 # where compiled artifacts are cached on disk
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _topics_from_env() -> set[str]:
    raw = os.environ.get("SYMC_LOGS", "")
    return {t.strip() for t in raw.split(",") if t.strip()}


@dataclass
class Config:
    cache_size_limit: int = 8
    cache_dir: str = field(
        default_factory=lambda: os.environ.get(
            "SYMC_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "symc")
        )
    )
    log_topics: set[str] = field(default_factory=_topics_from_env)
    # Capture-time failures that are not graph breaks (bugs in capture) fall back to eager
    # instead of raising, and are recorded as breaks with the internal error's text.
    suppress_errors: bool = True


config = Config()
