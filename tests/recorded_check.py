"""A check the build runs and the test replays (readme/check_snippets.py,
nn/expect_compile_error.py): checks that compile C++ cost seconds, and a warm `meson test`
should not pay them again when nothing they read has changed. The build's custom_target
runs the check with --record REPORT: it writes REPORT (the exit status, then the output)
and REPORT.d (the files it read, for ninja: the check runs again when one changes) and
exits 0 whatever the verdict, so a failing check fails its test, not the build. The test
runs the script with --replay REPORT: the output printed, the status returned."""
import re
import sys


def write(report, status, text, dependencies):
    """The depfile first: a report without one would never be made again."""
    escape = lambda path: path.replace(' ', '\\ ')
    with open(report + '.d', 'w', encoding='utf-8') as f:
        f.write(escape(report) + ': ' + ' \\\n  '.join(escape(d) for d in dependencies) + '\n')
    with open(report, 'w', encoding='utf-8') as f:
        f.write(f'exit {status}\n{text}')


def replay(report):
    """The recorded output, printed; the recorded exit status."""
    try:
        with open(report, encoding='utf-8') as f:
            status, _, text = f.read().partition('\n')
    except OSError as e:
        sys.exit(f'{report}: {e.strerror}: the build makes it (ninja -C <build>)')
    if not status.startswith('exit '):
        sys.exit(f'{report}: not a recorded check')
    print(text, end='')
    return int(status[5:])


def dependencies(depfiles):
    """Every file that `-MD`/`-M` depfiles name (their targets dropped), in first-seen order."""
    seen = {}
    for path in depfiles:
        try:
            with open(path, encoding='utf-8') as f:
                text = f.read().replace('\\\n', ' ')
        except OSError:
            continue
        _, _, deps = text.partition(': ')
        for dep in re.split(r'(?<!\\)\s+', deps.strip()):
            if dep:
                seen.setdefault(dep.replace('\\ ', ' '), None)
    return list(seen)
