"""Gunther's Universal Scalability Law fitted to measured points:

    X(N) = λ N / (1 + σ (N - 1) + κ N (N - 1))

N is the concurrency (closed connections on one node, or the number of nodes), X the throughput. σ is the
share of the work that serializes (contention), κ the cost of keeping N parties coherent (crosstalk), λ the
throughput of one. With κ > 0 the throughput peaks at N* = sqrt((1 - σ) / κ) (at least 1: with σ = 1 it
only falls from N = 1) and falls beyond it.

The fit keeps σ in [0, 1] and κ, λ ≥ 0. A parameter the points push against its bound (σ = 1 when throughput
falls faster than the law allows, κ = 0 when it never bends down) is not estimated, only held there: it gets no
standard error ("at bound"), and the others' errors are those with it held (curve_fit's covariance ignores
the bounds and would give it a meaningless ±)."""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, fields

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

KAPPA_NEGLIGIBLE = 1e-6
GOOD_R_SQUARED = 0.9  # below it the fit explains too little of the points to read its parameters bare
MIN_LEVELS = 4  # three parameters: fewer distinct N than this leaves nothing to judge the fit by
PARAMETERS = ("lam", "sigma", "kappa")  # curve_fit's order
BOUNDS = {"lam": (0.0, math.inf), "sigma": (0.0, 1.0), "kappa": (0.0, math.inf)}
# A parameter sits at its bound when moving it onto the bound changes the curve by less than this share anywhere
# in 1..N_max: far below any throughput difference we can measure, so the points do not tell it from the bound.
AT_BOUND_EFFECT = 1e-4
NAMES = {"lam": "λ", "sigma": "σ", "kappa": "κ"}


class UslError(ValueError):
    """The points cannot support a fit (too few, or not positive)."""


class UslFitFailed(UslError):
    """The least-squares fit itself failed on points that could support one (no convergence, bad numbers)."""


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
    peak_n_err: float | None = None  # N*'s standard error from σ's and κ's (those not at a bound)
    at_bound: tuple[str, ...] = ()  # parameters held at a bound (PARAMETERS' names): no standard error

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
        for name in self.at_bound:
            value = getattr(self, name)
            said.append(f"{NAMES[name]} = {value:.4g} sits at its bound: the points push it past what the law allows "
                        f"there, so it is held, not estimated, and has no standard error (the others' are given "
                        f"with it held)")
        if self.r_squared < GOOD_R_SQUARED:
            said.append(f"R² = {self.r_squared:.2f} < {GOOD_R_SQUARED}: the points scatter about the curve (run-to-run "
                        "noise, or a system the USL does not describe); read σ and κ with their errors")
        return said

    def shown(self, name: str, digits: int) -> str:
        """A parameter as the page and the console print it: its value ± its standard error, "at bound" in
        place of the ± where it is held there, "± ?" where the error could not be had."""
        value = f"{getattr(self, name):.{digits}f}"
        if name in self.at_bound:
            return f"{value} (at bound)"
        error = getattr(self, f"{name}_err")
        return f"{value} ± {error:.{digits}f}" if error is not None else f"{value} ± ?"

    def peak_shown(self) -> str:
        """N* with its standard error where it has one, and the throughput there; or why there is none."""
        if not self.peak_n:
            return "none (κ ≈ 0: no peak)"
        error = f" ± {self.peak_n_err:.1f}" if self.peak_n_err is not None else ""
        return f"{self.peak_n:.1f}{error} at {self.peak_x:.1f}/s"

    def as_dict(self) -> dict:
        values = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}
        return {**values, "at_bound": list(self.at_bound), "caveats": self.caveats()}  # as JSON will read it back

    @classmethod
    def from_dict(cls, values: dict) -> "UslFit":
        """The fit as summary.json keeps it (as_dict), without fitting again. A fit recorded before the bounds
        were checked gets them checked now, and loses the meaningless errors of what sits at one."""
        kept = {f.name: values.get(f.name) for f in fields(cls)}
        if "at_bound" not in values:
            held = at_bound(kept["lam"], kept["sigma"], kept["kappa"], kept["n_max"])
            kept.update({f"{name}_err": None for name in held})
            kept["at_bound"] = held
        return cls(**{**kept, "at_bound": tuple(kept["at_bound"] or ())})


def usl(n, lam: float, sigma: float, kappa: float):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def at_bound(lam: float, sigma: float, kappa: float, n_max: float) -> tuple[str, ...]:
    """The parameters that moving onto their nearest bound would change the curve by less than AT_BOUND_EFFECT
    anywhere in 1..n_max."""
    n = np.linspace(1.0, max(1.0, n_max), 200)
    fitted = {"lam": lam, "sigma": sigma, "kappa": kappa}
    curve = usl(n, lam, sigma, kappa)
    held = []
    for name in PARAMETERS:
        for bound in BOUNDS[name]:
            if math.isfinite(bound):
                moved = usl(n, **{**fitted, name: bound})
                if np.all(np.abs(moved - curve) <= AT_BOUND_EFFECT * np.abs(curve)):
                    held.append(name)
                    break
    return tuple(held)


def _jacobian(n, lam: float, sigma: float, kappa: float) -> dict[str, np.ndarray]:
    """∂X/∂λ, ∂X/∂σ, ∂X/∂κ at each N (the law's own derivatives, not finite differences)."""
    denominator = 1 + sigma * (n - 1) + kappa * n * (n - 1)
    return {"lam": n / denominator, "sigma": -lam * n * (n - 1) / denominator ** 2,
            "kappa": -lam * n ** 2 * (n - 1) / denominator ** 2}


def _covariance(n, x, lam: float, sigma: float, kappa: float, free: list[str]) -> np.ndarray | None:
    """The covariance of the free parameters with the others held: s² (JᵀJ)⁻¹ over their columns; None where
    it cannot be had (as many points as free parameters, or a singular JᵀJ)."""
    if len(n) <= len(free) or not free:
        return None
    derivatives = _jacobian(n, lam, sigma, kappa)
    j = np.column_stack([derivatives[name] for name in free])
    residual = float(np.sum((x - usl(n, lam, sigma, kappa)) ** 2))
    try:
        return np.linalg.inv(j.T @ j) * residual / (len(n) - len(free))
    except np.linalg.LinAlgError:
        return None


def _peak_error(peak_n: float | None, sigma: float, kappa: float, free: list[str], cov) -> float | None:
    """N* = sqrt((1 − σ)/κ)'s standard error, propagated from the free ones of σ and κ (a held one adds none);
    none where N* is clipped to 1 or there is no peak."""
    if peak_n is None or cov is None or peak_n <= 1.0 or "kappa" not in free:
        return None
    gradient = {"sigma": -peak_n / (2 * (1 - sigma)), "kappa": -peak_n / (2 * kappa)}
    g = np.array([gradient.get(name, 0.0) for name in free])
    variance = float(g @ cov @ g)
    return math.sqrt(variance) if math.isfinite(variance) and variance >= 0 else None


def fit(concurrency: list[float], throughput: list[float]) -> UslFit:
    """Least-squares fit with σ in [0, 1], κ ≥ 0, λ > 0; UslError when the points cannot support one,
    UslFitFailed (a UslError) when the fit itself fails, with its reason."""
    n = np.asarray(concurrency, dtype=float)
    x = np.asarray(throughput, dtype=float)
    if n.shape != x.shape or n.ndim != 1:
        raise UslError("concurrency and throughput must be lists of the same length")
    levels = len(set(n.tolist()))
    if levels < MIN_LEVELS:
        raise UslError(f"too few points to fit the USL: {levels} distinct concurrency level(s), at least "
                       f"{MIN_LEVELS} are needed (σ, κ and λ are three unknowns)")
    if np.any(n < 1) or np.any(x <= 0) or not np.all(np.isfinite(x)):
        raise UslError("every concurrency must be ≥ 1 and every throughput > 0")
    # λ starts at the best throughput per unit of concurrency seen at the lowest level.
    lam0 = float(np.max(x[n == n.min()] / n.min()))
    try:
        with warnings.catch_warnings():
            # "Covariance could not be estimated": ours is computed below, with the bounds taken into account.
            warnings.simplefilter("ignore", OptimizeWarning)
            params, _ = curve_fit(usl, n, x, p0=(lam0, 0.01, 0.0001), bounds=([0.0, 0.0, 0.0], [np.inf, 1.0, np.inf]),
                                  maxfev=20000)
    except (RuntimeError, ValueError, np.linalg.LinAlgError, OptimizeWarning, FloatingPointError) as problem:
        raise UslFitFailed(f"the least-squares fit failed ({type(problem).__name__}: {problem})") from problem
    lam, sigma, kappa = (float(p) for p in params)
    if not all(math.isfinite(p) for p in (lam, sigma, kappa)):
        raise UslFitFailed(f"the least-squares fit gave no finite parameters (λ {lam}, σ {sigma}, κ {kappa})")
    held = at_bound(lam, sigma, kappa, float(n.max()))
    free = [name for name in PARAMETERS if name not in held]
    cov = _covariance(n, x, lam, sigma, kappa, free)
    errors = {name: None for name in PARAMETERS}
    if cov is not None:
        for i, name in enumerate(free):
            errors[name] = float(math.sqrt(cov[i, i])) if math.isfinite(cov[i, i]) and cov[i, i] >= 0 else None
    residual = float(np.sum((x - usl(n, lam, sigma, kappa)) ** 2))
    total = float(np.sum((x - x.mean()) ** 2))
    r_squared = 1.0 - residual / total if total > 0 else 1.0
    # κ too small to change X anywhere in the measured range (below 1 ppm at the highest N), or held at 0, is no
    # evidence of a peak: N* would be an extrapolation far beyond the points.
    # N* below 1 (σ ≈ 1: every unit of work serialized) means the curve only falls from N = 1: the peak
    # among real concurrencies is N = 1 itself.
    peaks = kappa * n.max() ** 2 > KAPPA_NEGLIGIBLE and "kappa" not in held
    peak_n = max(1.0, math.sqrt((1 - sigma) / kappa)) if peaks else None
    peak_x = float(usl(peak_n, lam, sigma, kappa)) if peak_n else None
    return UslFit(sigma=sigma, kappa=kappa, lam=lam, sigma_err=errors["sigma"], kappa_err=errors["kappa"],
                  lam_err=errors["lam"], r_squared=r_squared, points=len(n), peak_n=peak_n, peak_x=peak_x,
                  n_max=float(n.max()), peak_n_err=_peak_error(peak_n, sigma, kappa, free, cov), at_bound=held)
