"""Arrays that grow in place (amortised doubling), shared by the mirror's tables."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["grow"]


def grow(arr: NDArray[Any], need: int) -> NDArray[Any]:
    """Return ``arr`` with room for ``need`` rows (doubling), keeping its contents.

    >>> grow(np.arange(3), 5).shape, grow(np.arange(3), 2).shape
    ((16,), (3,))
    """
    if need <= arr.shape[0]:
        return arr
    cap = max(need, 2 * arr.shape[0], 16)
    out = np.zeros((cap, *arr.shape[1:]), dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out
