"""When and how long to wait before retrying a failed HTTP call.

Capped exponential backoff with jitter, so hundreds of in-flight requests that failed together
do not hit a recovering server together again.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class RetryPolicy(BaseModel):
    """How many times to retry and how long to back off between attempts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_retries: int = Field(default=4, ge=0)
    backoff_base_s: float = Field(default=0.5, ge=0.0)
    backoff_max_s: float = Field(default=20.0, ge=0.0)
    jitter: bool = True
    retry_on_timeout: bool = True

    def delay_s(
        self, attempt: int, *, retry_after_s: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based).

        A server's ``Retry-After`` wins when it asks for longer than the computed delay.
        """
        ceiling = min(self.backoff_max_s, self.backoff_base_s * (2.0**attempt))
        delay = ceiling
        if self.jitter:
            # "Equal jitter": at least half the exponential delay, so backoff still grows.
            delay = ceiling / 2 + (rng or random).uniform(0, ceiling / 2)
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self.backoff_max_s))
        return delay


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds; dates are ignored."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
