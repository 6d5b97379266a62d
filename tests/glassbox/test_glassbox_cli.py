#!/usr/bin/python3
"""The glass box through the `minigrad` tool: `run --check-numerics` stops at the first
NaN/Inf with its root cause (exit 1), and without the flag the same run writes NaN;
`view` prints the ASCII graph.

usage: test_glassbox_cli.py PATH/TO/minigrad
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cli_test import CliTestCase, main  # noqa: E402

# y = log(x - 1) feeds a sum: the log is the root cause, not the sum.
LOG_GRAPH = """graph(%x: f32[3]) {
  %1 = constant 1.0 : f32[3]
  %2 = sub(%x, %1) : f32[3]  loc("model.cpp":10)
  %3 = log(%2) : f32[3]  loc("model.cpp":11)
  %4 = reduce_sum(%3) {axes = [0], keepdim = false} : f32[]  loc("model.cpp":12)
  return loss = %4
}
"""


class GlassBoxCliTest(CliTestCase):
    tmp_prefix = "mg_glassbox_"

    def write(self, name, text):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_check_numerics_names_the_log(self):
        g = self.write("log.mgir", LOG_GRAPH)
        x = os.path.join(self.tmp, "x.npy")
        np.save(x, np.array([2.0, 0.5, 3.0], dtype=np.float32))
        out = os.path.join(self.tmp, "out")
        self.minigrad("run", g, "-i", f"x={x}", "-o", out)  # off: NaN is written
        self.assertTrue(np.isnan(np.load(os.path.join(out, "loss.npy"))))
        r = self.minigrad("run", g, "-i", f"x={x}", "-o", out, "--check-numerics", expect=1)
        err = r.stderr
        self.assertIn("model.cpp:11", err)
        self.assertIn("= log(%2)", err)
        self.assertIn("text IR line 4:", err)
        self.assertIn("log of a negative or zero value", err)
        self.assertIn("operand 0 %2: f32[3]", err)
        self.assertIn("[1]=-0.5", err)
        self.assertNotIn("reduce_sum(%3) :", err.split("text IR line")[0])

    def test_view_prints_the_graph_by_role(self):
        g = self.write("log.mgir", LOG_GRAPH)
        out = self.minigrad("view", g).stdout
        self.assertTrue(out.startswith("graph: 1 input, 4 values, 1 output (forward 4)\n"), out)
        self.assertRegex(out, r"%3 +log\(%2\) +f32\[3\] +model.cpp:11\n")
        self.assertRegex(out, r"reduce_sum\(%3\) +f32\[\] +model.cpp:12 +=> loss\n")
        grad = self.minigrad("view", g, "--grad", "--no-locations").stdout
        self.assertIn("backward (grad)\n", grad)
        self.assertIn("=> grad_x", grad)
        self.assertNotIn("model.cpp", grad)
        self.minigrad("view", os.path.join(self.tmp, "missing.mgir"), expect=1)


if __name__ == "__main__":
    main(__doc__)
