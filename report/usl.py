"""Gunther's Universal Scalability Law fitted to measured points:

    X(N) = λ N / (1 + σ (N - 1) + κ N (N - 1))

N is the concurrency (closed connections on one node, or the number of nodes), X the throughput. σ is the
share of the work that serializes (contention), κ the cost of keeping N parties coherent (crosstalk), λ the
throughput of one. With κ > 0 the throughput peaks at N* = sqrt((1 - σ) / κ) (at least 1: with σ = 1 it
only falls from N = 1) and falls beyond it."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np
from scipy.optimize import curve_fit

KAPPA_NEGLIGIBLE = 1e-6
GOOD_R_SQUARED = 0.9  # below it the fit explains too little of the points to read its parameters bare
MIN_LEVELS = 4  # three parameters: fewer distinct N than this leaves nothing to judge the fit by


class UslError(ValueError):
    """The points cannot support a fit (too few, or not positive)."""


@dataclass(frozen=True)
class UslFit:
    sigma: float
    kappa: float
    lam: float
    sigma_err: float | None  # one standard error, from the fit's covariance
    kappa_err: float | None
    lam_err: float | None
    r_squared: float
    points: int
    peak_n: float | None  # N* (None when κ is negligible: no peak, the curve flattens towards λ/σ)
    peak_x: float | None
    n_max: float  # the largest N measured: an N* beyond it is an extrapolation

    def throughput(self, n):
        return usl(np.asarray(n, dtype=float), self.lam, self.sigma, self.kappa)

    def caveats(self) -> list[str]:
        """What a reader must know before trusting σ, κ or N*: said with the fit, never left out."""
        said = []
        if self.peak_n and self.peak_n > self.n_max:
            said.append(f"N* = {self.peak_n:.1f} lies beyond the largest N measured ({self.n_max:g}): an "
                        "extrapolation, measure up to it before relying on it")
        if self.peak_n and self.kappa_err is not None and self.kappa_err >= self.kappa:
            said.append(f"κ = {self.kappa:.2g} is within one standard error ({self.kappa_err:.2g}) of 0: the points do "
                        "not show that throughput falls, so N* is not established")
        if self.r_squared < GOOD_R_SQUARED:
            said.append(f"R² = {self.r_squared:.2f} < {GOOD_R_SQUARED}: the points scatter about the curve (run-to-run "
                        "noise, or a system the USL does not describe); read σ and κ with their errors")
        return said

    def as_dict(self) -> dict:
        values = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}
        return {**values, "caveats": self.caveats()}

    @classmethod
    def from_dict(cls, values: dict) -> "UslFit":
        """The fit as summary.json keeps it (as_dict), without fitting again."""
        return cls(**{f.name: values.get(f.name) for f in fields(cls)})


def usl(n, lam: float, sigma: float, kappa: float):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def fit(concurrency: list[float], throughput: list[float]) -> UslFit:
    """Least-squares fit with σ in [0, 1], κ ≥ 0, λ > 0; UslError when the points cannot support one."""
    n = np.asarray(concurrency, dtype=float)
    x = np.asarray(throughput, dtype=float)
    if n.shape != x.shape or n.ndim != 1:
        raise UslError("concurrency and throughput must be lists of the same length")
    levels = len(set(n.tolist()))
    if levels < MIN_LEVELS:
        raise UslError(f"too few points to fit the USL: {levels} distinct concurrency level(s), at least "
                       f"{MIN_LEVELS} are needed (σ, κ and λ are three unknowns)")
    if np.any(n < 1) or np.any(x <= 0):
        raise UslError("every concurrency must be ≥ 1 and every throughput > 0")
    # λ starts at the best throughput per unit of concurrency seen at the lowest level.
    lam0 = float(np.max(x[n == n.min()] / n.min()))
    params, cov = curve_fit(usl, n, x, p0=(lam0, 0.01, 0.0001),
                            bounds=([0.0, 0.0, 0.0], [np.inf, 1.0, np.inf]), maxfev=20000)
    lam, sigma, kappa = (float(p) for p in params)
    errors = [float(math.sqrt(v)) if math.isfinite(v) and v >= 0 else None for v in np.diag(cov)]
    residual = float(np.sum((x - usl(n, lam, sigma, kappa)) ** 2))
    total = float(np.sum((x - x.mean()) ** 2))
    r_squared = 1.0 - residual / total if total > 0 else 1.0
    # κ too small to change X anywhere in the measured range (below 1 ppm at the highest N) is no evidence of
    # a peak: N* would be an extrapolation far beyond the points.
    # N* below 1 (σ ≈ 1: every unit of work serialized) means the curve only falls from N = 1: the peak
    # among real concurrencies is N = 1 itself.
    peak_n = max(1.0, math.sqrt((1 - sigma) / kappa)) if kappa * n.max() ** 2 > KAPPA_NEGLIGIBLE else None
    peak_x = float(usl(peak_n, lam, sigma, kappa)) if peak_n else None
    return UslFit(sigma=sigma, kappa=kappa, lam=lam, sigma_err=errors[1], kappa_err=errors[2],
                  lam_err=errors[0], r_squared=r_squared, points=len(n), peak_n=peak_n, peak_x=peak_x,
                  n_max=float(n.max()))
