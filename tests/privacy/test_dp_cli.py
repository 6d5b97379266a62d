#!/usr/bin/python3
"""`minigrad dp-epsilon` / `dp-sigma` end to end: published vectors through the CLI (Opacus's
accountant tests), the output format (17 significant digits, the best order), --epochs as
Opacus counts steps, the inverse's round trip, agreement with the multi-precision oracle
(rdp_reference.py, mpmath) on parameters no publication lists, and bad arguments (exit 2 with
a message naming the option; an unreachable budget exits 1).

usage: test_dp_cli.py PATH/TO/minigrad
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from cli_test import CliTestCase, main  # noqa: E402

import rdp_reference  # noqa: E402  (mpmath: Debian's python3-mpmath)


def parse(stdout):
    out = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(": ")
        out[key] = value
    return out


class DpCliTest(CliTestCase):
    tmp_prefix = "mg_dp_cli_"

    def eps(self, *args, expect=0):
        r = self.minigrad("dp-epsilon", *args, expect=expect)
        return parse(r.stdout), r

    def test_opacus_rdp_accountant_vector(self):
        # Opacus accountants_test.test_rdp_accountant: 7.32911117143.
        out, r = self.eps("--q", "0.04", "--sigma", "1.5", "--steps", "2250", "--delta", "1e-5")
        self.assertEqual(list(out), ["epsilon", "order"])
        self.assertRegex(out["epsilon"], r"^\d\.\d{16}$")  # 17 significant digits
        self.assertAlmostEqual(float(out["epsilon"]), 7.32911117143, places=10)
        self.assertEqual(out["order"], "3.9")
        self.assertEqual(r.stderr, "")
        # --epochs 90 at q 0.04 is int(90 / 0.04) = 2250 steps, as Opacus counts them.
        out2, _ = self.eps("--q", "0.04", "--sigma", "1.5", "--epochs", "90", "--delta", "1e-5")
        self.assertEqual(out2, out)

    def test_classic_conversion_tutorial_row(self):
        # TF Privacy tutorials/README.md: sigma 1.12, batch 256 of 60000, 60 epochs -> 2.92.
        out, _ = self.eps("--q", repr(256 / 60000), "--sigma", "1.12", "--steps", str(60 * 60000 // 256),
                          "--delta", "1e-5", "--conversion", "classic")
        self.assertEqual(f"{float(out['epsilon']):.2f}", "2.92")
        balle, _ = self.eps("--q", repr(256 / 60000), "--sigma", "1.12", "--steps", str(60 * 60000 // 256),
                            "--delta", "1e-5")
        self.assertLess(float(balle["epsilon"]), float(out["epsilon"]))

    def test_noise_multiplier_vectors_and_round_trip(self):
        # Opacus accountants_test: eps 8, delta 1e-5, q 0.04: 90 epochs -> 1.416, 2000 steps -> 1.3562.
        r = self.minigrad("dp-sigma", "--q", "0.04", "--epsilon", "8", "--epochs", "90", "--delta", "1e-5")
        out = parse(r.stdout)
        self.assertEqual(list(out), ["sigma", "epsilon", "order"])
        self.assertAlmostEqual(float(out["sigma"]), 1.416, places=4)
        r = self.minigrad("dp-sigma", "--q", "0.04", "--epsilon", "8", "--steps", "2000", "--delta", "1e-5")
        self.assertAlmostEqual(float(parse(r.stdout)["sigma"]), 1.3562, places=4)
        # Round trip at a tight tolerance, both conversions: the sigma printed gives back the
        # epsilon printed, which is within the tolerance below the target.
        for conv in ("balle", "classic"):
            r = self.minigrad("dp-sigma", "--q", "0.01", "--epsilon", "2.5", "--steps", "3000", "--delta", "1e-6",
                              "--conversion", conv, "--tolerance", "1e-9")
            out = parse(r.stdout)
            back, _ = self.eps("--q", "0.01", "--sigma", out["sigma"], "--steps", "3000", "--delta", "1e-6",
                               "--conversion", conv)
            self.assertEqual(back["epsilon"], out["epsilon"])
            self.assertLessEqual(float(back["epsilon"]), 2.5)
            self.assertGreaterEqual(float(back["epsilon"]), 2.5 - 1e-9)

    def test_against_multiprecision_oracle(self):
        orders = [1.5, 2, 3, 4.5, 8, 16, 32]
        for q, sigma, steps, delta in [(0.01, 1.1, 5000, 1e-5), (0.2, 3.0, 100, 1e-6), (1e-4, 0.8, 100000, 1e-5)]:
            for conv in ("balle", "classic"):
                out, _ = self.eps("--q", repr(q), "--sigma", repr(sigma), "--steps", str(steps), "--delta", repr(delta),
                                  "--conversion", conv, "--orders", ",".join(map(str, orders)))
                want, order = rdp_reference.epsilon(q, sigma, steps, delta, conv, orders)
                self.assertAlmostEqual(float(out["epsilon"]), float(want), delta=1e-9 * float(want),
                                       msg=f"q={q} sigma={sigma} steps={steps} {conv}")
                self.assertEqual(float(out["order"]), order)

    def test_gaussian_mechanism_closed_form(self):
        # q = 1, one order: eps = alpha T / (2 sigma^2) - log(delta) / (alpha - 1) (classic).
        out, _ = self.eps("--q", "1", "--sigma", "2", "--steps", "3", "--delta", "1e-5", "--conversion", "classic",
                          "--orders", "5")
        self.assertAlmostEqual(float(out["epsilon"]), 5 * 3 / 8 + 11.512925464970229 / 4, places=13)

    def test_edge_order_warning(self):
        # Much noise, few steps: the best order is the grid's largest (63); stderr says so.
        out, r = self.eps("--q", "0.001", "--sigma", "50", "--steps", "10", "--delta", "1e-5")
        self.assertEqual(out["order"], "63")
        self.assertIn("warning: the best order 63 is the largest of the grid", r.stderr)

    def test_bad_arguments(self):
        base = {"--q": "0.01", "--sigma": "1", "--steps": "100", "--delta": "1e-5"}
        cases = [
            ({"--q": "-0.1"}, "--q must be in [0, 1], got -0.1"),
            ({"--q": "1.5"}, "--q must be in [0, 1], got 1.5"),
            ({"--q": "abc"}, "for option '--q' is invalid"),
            ({"--sigma": "0"}, "--sigma must be > 0, got 0"),
            ({"--sigma": "-1"}, "--sigma must be > 0, got -1"),
            ({"--sigma": "nan"}, "--sigma must be a finite number"),
            ({"--delta": "0"}, "--delta must be in (0, 1), got 0"),
            ({"--delta": "1"}, "--delta must be in (0, 1), got 1"),
            ({"--steps": "-5"}, "--steps must be >= 0, got -5"),
            ({"--epochs": "3"}, "give exactly one of --steps and --epochs"),
            ({"--conversion": "pld"}, "--conversion must be balle or classic, got 'pld'"),
            ({"--orders": "2,0.5"}, "--orders: '0.5' is not an order > 1"),
            ({"--orders": "2,,3"}, "--orders: '' is not an order > 1"),
        ]
        for change, message in cases:
            args = dict(base, **change)
            flat = [x for kv in args.items() for x in kv]
            r = self.minigrad("dp-epsilon", *flat, expect=2)
            self.assertIn(message, r.stderr, msg=str(change))
        r = self.minigrad("dp-epsilon", "--q", "0.01", "--sigma", "1", "--delta", "1e-5", expect=2)
        self.assertIn("give exactly one of --steps and --epochs", r.stderr)
        r = self.minigrad("dp-epsilon", "--sigma", "1", "--steps", "1", "--delta", "1e-5", expect=2)
        self.assertIn("missing --q", r.stderr)
        r = self.minigrad("dp-sigma", "--q", "0", "--epsilon", "1", "--steps", "10", "--delta", "1e-5", expect=2)
        self.assertIn("--q must be in (0, 1], got 0", r.stderr)
        r = self.minigrad("dp-sigma", "--q", "0.1", "--epsilon", "-1", "--steps", "10", "--delta", "1e-5", expect=2)
        self.assertIn("--epsilon must be > 0, got -1", r.stderr)
        r = self.minigrad("dp-sigma", "--q", "1", "--epsilon", "1e-12", "--steps", "1000000", "--delta", "1e-5",
                          expect=1)
        self.assertIn("the privacy budget is too small", r.stderr)
        self.assertEqual(r.stdout, "")
        # --help works without the required options.
        r = self.minigrad("dp-sigma", "--help")
        self.assertIn("usage: minigrad dp-sigma", r.stdout)


if __name__ == "__main__":
    main(__doc__)
