#!/usr/bin/env python3
"""Compiles a file that must fail to compile and checks the diagnostic is short and clear:
exactly one error, containing the expected text, in under MAX_BYTES of compiler output.

    expect_compile_error.py CXX INCLUDE_DIR FILE EXPECTED_TEXT [--record REPORT]
    expect_compile_error.py --replay REPORT

With --record the build runs it and the test replays the verdict (tests/recorded_check.py):
the compile runs again only when the file or a header it reads changes."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import recorded_check  # noqa: E402

MAX_BYTES = 3000  # the diagnostic was 7.7 KB of Hana instantiations before the check


def check(cxx, include, source, expected):
    """(exit status, report text) of the compile that must fail."""
    r = subprocess.run([cxx, '-std=c++20', '-fsyntax-only', '-fdiagnostics-color=never', '-I' + include, source],
                       capture_output=True, text=True)
    out = r.stderr
    errors = [line for line in out.splitlines() if ' error: ' in line]
    problems = []
    if r.returncode == 0:
        problems.append('it compiled')
    if len(errors) != 1:
        problems.append(f'{len(errors)} errors, expected exactly 1')
    if expected not in out:
        problems.append(f'the message lacks {expected!r}')
    if len(out) > MAX_BYTES:
        problems.append(f'{len(out)} bytes of diagnostics (limit {MAX_BYTES})')
    if problems:
        return 1, out + '\nFAIL: ' + '; '.join(problems) + '\n'
    return 0, f'PASS: one error, {len(out)} bytes: {errors[0].strip()[:160]}\n'


def headers(cxx, include, source):
    """The files the compile reads (the preprocessor's -M list: it succeeds where the compile
    must fail, the error being in the code, not the includes)."""
    with tempfile.TemporaryDirectory() as tmp:
        deps = os.path.join(tmp, 'deps.d')
        subprocess.run([cxx, '-std=c++20', '-M', '-MF', deps, '-I' + include, source], capture_output=True)
        return recorded_check.dependencies([deps]) or [source]


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == '--replay':
        return recorded_check.replay(args[1])
    record = None
    if len(args) == 6 and args[4] == '--record':
        record = args[5]
        args = args[:4]
    if len(args) != 4:
        sys.exit(__doc__)
    status, text = check(*args)
    if record is None:
        print(text, end='')
        return status
    recorded_check.write(record, status, text, headers(*args[:3]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
