"""Logging on the standard `logging` module, one logger per topic: `symc.<topic>`.

    SYMC_LOGS=guards,recompiles,graph python train.py
    topics: guards (each entry's guards), recompiles (why), graph (captured graphs),
            breaks (graph breaks), kernels (inductor's generated code)

`log(topic, message)` is a no-op unless the topic is enabled (env var or symc.config.log_topics).
"""

from __future__ import annotations

import logging

from symc.config import config

TOPICS = ("guards", "recompiles", "graph", "breaks", "kernels")
_configured: set[str] = set()


def logger(topic: str) -> logging.Logger:
    return logging.getLogger(f"symc.{topic}")


def enabled(topic: str) -> bool:
    return topic in config.log_topics or "all" in config.log_topics


def log(topic: str, message: str, *args) -> None:
    if not enabled(topic):
        return
    log_ = logger(topic)
    if topic not in _configured:
        _configured.add(topic)
        if not log_.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("[symc.%(name)s] %(message)s".replace(
                "symc.%(name)s", "%(name)s")))
            log_.addHandler(handler)
        log_.setLevel(logging.INFO)
    log_.info(message, *args)
