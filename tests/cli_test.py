"""The base of the `minigrad` CLI end-to-end tests (tools/test_cli.py,
passes/test_opt_cli.py, c99/test_emit_c_cli.py): a temporary directory per test, `minigrad`
runs with their exit status checked, C compiled through ccache (compile_c), and main() taking the binary's path as the first
argument (the rest goes to unittest)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest


class CliTestCase(unittest.TestCase):
    minigrad_path = None  # set by main()
    tmp_prefix = "mg_cli_"

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix=self.tmp_prefix)
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def minigrad(self, *args, expect=0):
        r = subprocess.run([CliTestCase.minigrad_path, *args], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, expect,
                         f"minigrad {' '.join(args)}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}")
        return r

    def compile_c(self, directory, *args):
        """`args` (a compile command naming its files relative to `directory`) run there, through
        ccache where it is installed: ccache replays a compile it has seen with the same
        compiler, options, source and headers, warnings included, and never caches a failure,
        so a re-run of the suite compiles only C that changed. MG_TEST_CCACHE=0 compiles every
        time. The command's result."""
        use = os.environ.get("MG_TEST_CCACHE") != "0" and shutil.which("ccache") is not None
        return subprocess.run((["ccache"] if use else []) + list(args), cwd=directory, capture_output=True,
                              text=True, timeout=120)


def main(usage):
    if len(sys.argv) < 2:
        sys.exit(usage)
    CliTestCase.minigrad_path = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[2:])
