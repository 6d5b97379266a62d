#!/usr/bin/python3
"""`minigrad opt` end to end: the optimized text IR parses back (`minigrad check`), runs to
the same bits as the original (`minigrad run` on the same .npy inputs, gradients included
via the `grad` pipeline pass), --stats prints one row per pass, --dump-after prints the
graph after that pass, and bad pipelines fail with exit 1 naming the column.

usage: test_opt_cli.py PATH/TO/minigrad
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cli_test import CliTestCase, main  # noqa: E402
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "data")


class OptCliTest(CliTestCase):
    tmp_prefix = "mg_opt_"

    def run_outputs(self, mgir, inputs, out):
        args = ["run", mgir, "--out", os.path.join(self.tmp, out)]
        for name, path in inputs.items():
            args += ["--input", f"{name}={path}"]
        self.minigrad(*args)
        d = os.path.join(self.tmp, out)
        return {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))}

    def test_optimized_graph_parses_and_computes_the_same_bits(self):
        src = os.path.join(DATA, "mlp_loss.mgir")
        rng = np.random.default_rng(7)
        inputs = {}
        for name, shape in [("x", (2, 3)), ("w", (3, 4)), ("b", (4,))]:
            p = os.path.join(self.tmp, name + ".npy")
            np.save(p, rng.standard_normal(shape))
            inputs[name] = p
        # The reference: the grad pass alone; then the whole pipeline.
        ref = os.path.join(self.tmp, "ref.mgir")
        self.minigrad("opt", src, "--passes=grad", "-o", ref)
        opt = os.path.join(self.tmp, "opt.mgir")
        r = self.minigrad("opt", src, "--passes=grad,rewrite,fold,cse,fuse,dce", "--stats", "--verify", "-o", opt)
        for name in ["grad", "rewrite", "fold", "cse", "fuse", "dce", "total"]:
            self.assertRegex(r.stderr, rf"(?m)^{name} ", r.stderr)
        text = open(opt).read()
        self.assertIn("fused(", text)
        self.assertIn('kind = "matmul"', text)
        self.minigrad("check", opt)
        want = self.run_outputs(ref, inputs, "ref")
        got = self.run_outputs(opt, inputs, "opt")
        self.assertEqual(sorted(want), ["grad_b.npy", "grad_w.npy", "grad_x.npy", "loss.npy"])
        self.assertEqual(sorted(want), sorted(got))
        for f in want:
            self.assertEqual(want[f].dtype, got[f].dtype, f)
            self.assertEqual(want[f].tobytes(), got[f].tobytes(), f)
        # Idempotent on its own output.
        again = self.minigrad("opt", opt, "--passes=fold,cse,fuse,dce").stdout
        self.assertEqual(again, text)

    def test_dump_after_prints_the_graph_after_that_pass(self):
        r = self.minigrad("opt", os.path.join(DATA, "mlp_loss.mgir"), "--passes=fold,fuse,dce", "--dump-after=fuse")
        self.assertTrue(r.stderr.startswith("// after fuse\ngraph("), r.stderr[:200])
        r = self.minigrad("opt", os.path.join(DATA, "mlp_loss.mgir"), "--passes=fuse", "--dump-after=fuse", "--dump-dot")
        self.assertIn("digraph", r.stderr)

    def test_bad_pipelines_are_user_errors(self):
        src = os.path.join(DATA, "mlp_loss.mgir")
        r = self.minigrad("opt", src, "--passes=fold,,dce", expect=1)
        self.assertIn("column 6: expected a pass name", r.stderr)
        r = self.minigrad("opt", src, "--passes=fold,fusion", expect=1)
        self.assertIn("unknown pass 'fusion'", r.stderr)
        r = self.minigrad("opt", os.path.join(DATA, "two_outputs.mgir"), "--passes=grad", expect=1)
        self.assertIn("exactly one output", r.stderr)


if __name__ == "__main__":
    main(__doc__)
