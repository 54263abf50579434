"""The few special functions the generator needs, in numpy and the standard library (no scipy at run time)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


def expit(x: npt.ArrayLike) -> Floats:
    """The logistic function 1 / (1 + e^-x)."""
    return np.asarray(1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64))), dtype=np.float64)


def logit(p: npt.ArrayLike) -> Floats:
    """The log-odds log(p / (1 - p)), the inverse of `expit`."""
    p = np.asarray(p, dtype=np.float64)
    return np.asarray(np.log(p / (1.0 - p)), dtype=np.float64)


def normal_sf(z: npt.ArrayLike) -> Floats:
    """Upper tail of the standard normal, P(Z > z), elementwise."""
    z = np.asarray(z, dtype=np.float64)
    tail = np.frompyfunc(lambda v: 0.5 * math.erfc(v / math.sqrt(2.0)), 1, 1)(z)
    return np.asarray(tail, dtype=np.float64)


def normal_ppf(q: npt.ArrayLike) -> Floats:
    """Quantiles of the standard normal, elementwise."""
    inverse = NormalDist().inv_cdf
    q = np.asarray(q, dtype=np.float64)
    return np.asarray([inverse(float(v)) for v in q.ravel()], dtype=np.float64).reshape(q.shape)


def ar1_filter(shocks: Floats, phi: float) -> Floats:
    """y[i] = shocks[i] + phi * y[i - 1], from y[-1] = 0 (an AR(1) recursion; a loop, runs are short)."""
    out = np.empty(len(shocks), dtype=np.float64)
    previous = 0.0
    for i, shock in enumerate(shocks.tolist()):
        previous = shock + phi * previous
        out[i] = previous
    return out
