#!/usr/bin/env python3
"""An independent oracle for the RDP accountant, in multi-precision (mpmath, 50 digits).

Not a port of the library's series: A_alpha is computed from its definition,
    A_alpha = E_{z ~ N(0, sigma^2)} [((1 - q) + q exp((2z - 1) / (2 sigma^2)))^alpha],
by numerical integration (mpmath.quad) for any order, and by the exact binomial sum for
integer orders (each checks the other). RDP = log(A_alpha) / (alpha - 1) per step, then the
Balle et al. 2020 or the classic conversion to (eps, delta), minimised over the orders.
The published test vectors (tests/privacy/test_rdp_accountant.cpp) are the primary oracle;
this one covers parameters no publication lists. Usage:
    rdp_reference.py Q SIGMA STEPS DELTA [balle|classic]   -> prints "eps order"
    rdp_reference.py --log-a Q SIGMA ALPHA                 -> prints log A_alpha
"""
import functools
import sys

import mpmath as mp

mp.mp.dps = 50


def default_orders():
    return [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def log_a_quad(q, sigma, alpha):
    q, sigma, alpha = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

    def f(z):
        ratio = (1 - q) + q * mp.exp((2 * z - 1) / (2 * sigma**2))
        return mp.npdf(z, 0, sigma) * ratio**alpha

    # Split where the integrand lives: around 0 and around the shifted mean (alpha - 1/2)
    # (the tilted Gaussian's centre for q near 1), so quad sees both bumps.
    pts = sorted({-mp.inf, mp.mpf(0), mp.mpf(0.5), alpha - mp.mpf(0.5), mp.inf})
    return mp.log(mp.quad(f, pts, maxdegree=10))


def log_a_int(q, sigma, alpha):
    q, sigma = mp.mpf(q), mp.mpf(sigma)
    a = int(alpha)
    total = mp.mpf(0)
    for i in range(a + 1):
        total += mp.binomial(a, i) * q**i * (1 - q) ** (a - i) * mp.exp(mp.mpf(i * i - i) / (2 * sigma**2))
    return mp.log(total)


@functools.lru_cache(maxsize=None)  # both conversions of one (q, sigma) need the same orders
def rdp(q, sigma, alpha):
    if q == 1:
        return mp.mpf(alpha) / (2 * mp.mpf(sigma) ** 2)
    la = log_a_int(q, sigma, alpha) if float(alpha).is_integer() else log_a_quad(q, sigma, alpha)
    return la / (mp.mpf(alpha) - 1)


def epsilon(q, sigma, steps, delta, conversion="balle", orders=None):
    orders = orders or default_orders()
    best = None
    for a in orders:
        r = steps * rdp(q, sigma, a)
        am = mp.mpf(a)
        if conversion == "balle":
            eps = r - (mp.log(delta) + mp.log(am)) / (am - 1) + mp.log((am - 1) / am)
        else:
            eps = r - mp.log(delta) / (am - 1)
        if best is None or eps < best[0]:
            best = (eps, a)
    return max(best[0], 0), best[1]


def main(argv):
    if argv[:1] == ["--log-a"]:
        q, sigma, alpha = map(float, argv[1:4])
        la = log_a_int(q, sigma, alpha) if alpha.is_integer() else log_a_quad(q, sigma, alpha)
        print(mp.nstr(la, 20))
        return 0
    q, sigma, steps, delta = float(argv[0]), float(argv[1]), int(argv[2]), float(argv[3])
    conversion = argv[4] if len(argv) > 4 else "balle"
    eps, order = epsilon(q, sigma, steps, delta, conversion)
    print(mp.nstr(eps, 20), order)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
