#!/usr/bin/env python3
"""Compiles every ```cpp block of README.md (meson test --suite readme).

    check_snippets.py README.md [--pch DIR HEADER] [--record REPORT] -- COMPILER [FLAGS...]
    check_snippets.py --replay REPORT

Each block becomes one translation unit, compiled with `COMPILER FLAGS -fsyntax-only`:
its #includes, `using` lines and top-level declarations (struct/class/template/namespace
blocks and BOOST_HANA_ macros) stay at file scope; the remaining statements go into a
function body. A block with its own `int main` is compiled as it stands. Names a block
uses without declaring them (the user's data, such as `X`) are declared by an HTML comment
on the line before the fence, which GitHub does not show:

    <!-- snippet: mg::Array X, W; -->

A block that goes on from the one before it (using its includes, types and variables) says
so: `<!-- snippet: continues; mg::Array X_test; -->` compiles the previous block's code, its
declarations and then this block as one unit.

`#line` directives make every diagnostic name the README and the block's own line numbers.
A block that does not compile fails the test with its README line and the compiler's error.

Speed (the blocks are mostly header parsing): with GCC, the header that most blocks include
first is precompiled once, where GCC finds it only for an `#include` of that header as a
block's first one (a .gch beside the name, on an -I searched first); GCC uses it only if it
was built with the same options, else parses the header as usual, so each block still
compiles exactly as written. The build makes that header (`--pch DIR HEADER`: DIR holds
HEADER.gch, built by tests/readme/pch/ with these options and rebuilt when a header changes),
so a run does not spend seconds remaking it; without --pch the script precompiles it itself.
Blocks compile with -Winvalid-pch, and the summary says if GCC ignored the header.
Loading that header is most of a block's time, so blocks with the same #include lines
compile as one unit, each in a namespace of its own (group_key, grouped_unit); a unit that
fails is compiled again block by block, so a verdict is always the block's own. The units
compile in parallel (one job per CPU).

The build runs the check (--record, tests/recorded_check.py): it runs again only when the
README, a header or this script changes, and the test (--replay) prints its verdicts, so a
warm `meson test` does not recompile twelve unchanged units; a broken block fails the test,
not the build.
"""
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import recorded_check  # noqa: E402

TOP_LEVEL = re.compile(r'\s*(#|using\s+namespace\b|using\s+\w+\s*=|struct\b|class\b|template\b|namespace\b|'
                       r'BOOST_HANA_|enum\b)')
CONTEXT = re.compile(r'<!--\s*snippet:(.*?)-->')


def code_of(line):
    """The line without its // comment (one outside string and character literals)."""
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == '\\':
                i += 1
            elif ch == quote:
                quote = None
        elif ch in '"\'':
            quote = ch
        elif line.startswith('//', i):
            return line[:i]
        i += 1
    return line


def blocks(lines):
    """(fence line, [(README line, code)], [(README line, declarations)]) for each ```cpp
    block, 1-based; a continuing block carries the code and declarations of the one before."""
    i = 0
    prev = None
    while i < len(lines):
        if lines[i].strip() == '```cpp':
            decls = []
            m = CONTEXT.search(lines[i - 1]) if i > 0 else None
            text = m.group(1).strip() if m else ''
            code = []
            if re.match(r'continues\b', text):
                if prev is None:
                    raise SystemExit(f'line {i}: "continues", but no ```cpp block comes before')
                code, decls = list(prev[1]), list(prev[2])
                text = re.sub(r'^continues\s*;?\s*', '', text)
            if text:
                decls.append((i, text))  # the comment's line
            j = i + 1
            while j < len(lines) and lines[j].strip() != '```':
                j += 1
            if j == len(lines):
                raise SystemExit(f'line {i + 1}: ```cpp block is not closed')
            code += [(n + 1, lines[n]) for n in range(i + 1, j)]
            prev = (i + 1, code, decls)
            yield prev
            i = j
        i += 1


def split(code):
    """(file-scope lines, statement lines) of a block, each (README line, text)."""
    top, body = [], []
    depth = 0          # braces open in the current top-level declaration
    in_decl = False
    for n, line in code:
        if not in_decl and TOP_LEVEL.match(line):
            in_decl = not line.lstrip().startswith('#')
        if in_decl or line.lstrip().startswith('#'):
            top.append((n, line))
            text = code_of(line)
            depth += text.count('{') - text.count('}')
            if in_decl and depth == 0 and text.rstrip().endswith((';', '}', ')')):
                in_decl = False
        else:
            body.append((n, line))
    return top, body


def has_main(code):
    return any(re.match(r'\s*int\s+main\s*\(', line) for _, line in code)


def translation_unit(path, code, decls):
    """The block as a TU: file-scope lines first, statements inside a function."""
    if has_main(code):
        return '\n'.join(emit(path, code)) + '\n'
    top, body = split(code)
    tu = emit(path, top)
    tu.append('#line 1 "snippet-wrapper"')
    tu.append('[[maybe_unused]] static void readme_snippet() {')
    tu += emit(path, decls)
    tu += emit(path, body)
    tu.append('}')
    return '\n'.join(tu) + '\n'


ADAPT = re.compile(r'\s*BOOST_HANA_ADAPT_STRUCT\(\s*(\w+)\s*,[^;]*\);\s*(//.*)?$')


def group_key(code):
    """Blocks with the same key compile as one TU (grouped_unit): the same #include lines
    in the same order (so no block sees a header it does not include itself), no main, no
    other preprocessor lines, and BOOST_HANA_ macros only as one-line ADAPT_STRUCTs (they
    must stand outside the block's namespace). None: the block compiles on its own."""
    if has_main(code):
        return None
    top, _ = split(code)
    includes = []
    for _, line in top:
        if line.lstrip().startswith('#'):
            if not re.match(r'\s*#\s*include\b', line):
                return None
            includes.append(line.strip())
        elif 'BOOST_HANA_' in line and not ADAPT.match(line):
            return None
    return tuple(includes)


def grouped_unit(path, members):
    """Blocks of one group_key as one TU: their shared #includes, then each block in a
    namespace of its own (its declarations, `using` lines and statements, which no other
    block sees), its ADAPT_STRUCTs after the namespace with the type's qualified name."""
    first_top, _ = split(members[0][1])
    tu = emit(path, [(n, line) for n, line in first_top if line.lstrip().startswith('#')])
    for fence, code, decls in members:
        top, body = split(code)
        ns = f'readme_block_{fence}'
        adapts = [(n, line) for n, line in top if ADAPT.match(line)]
        decl_lines = [(n, line) for n, line in top if not line.lstrip().startswith('#') and (n, line) not in adapts]
        tu.append('#line 1 "snippet-wrapper"')
        tu.append(f'namespace {ns} {{')
        tu += emit(path, decl_lines)
        tu.append('#line 1 "snippet-wrapper"')
        tu.append('[[maybe_unused]] static void readme_snippet() {')
        tu += emit(path, decls)
        tu += emit(path, body)
        tu.append('}')
        tu.append(f'}}  // namespace {ns}')
        for n, line in adapts:
            tu.append(f'#line {n} "{path}"')
            at = ADAPT.match(line).start(1)
            tu.append(line[:at] + f'{ns}::' + line[at:])
    return '\n'.join(tu) + '\n'


def emit(path, chunk):
    """Numbered lines with a #line directive wherever the numbering jumps."""
    out, prev = [], None
    for n, line in chunk:
        if prev is None or n != prev + 1:
            out.append(f'#line {n} "{path}"')
        out.append(line)
        prev = n
    return out


def first_include(tu):
    """The header a TU includes before any code (`minigrad/minigrad.hpp`), or None."""
    for line in tu.split('\n'):
        if line.startswith('#line') or not line.strip():
            continue
        m = re.match(r'\s*#\s*include\s*<([^>]+)>', line)
        return m.group(1) if m else None
    return None


def precompile(compiler, header, tmp):
    """Flags that let GCC use a precompiled `header` (an -I dir holding header.gch), or []
    when the compiler is not GCC or cannot build it (the blocks then parse it as usual)."""
    cc = compiler[1:] if os.path.basename(compiler[0]) == 'ccache' else compiler
    probe = subprocess.run(cc + ['-dM', '-E', '-x', 'c++', os.devnull], capture_output=True, text=True)
    if probe.returncode != 0 or '__GNUC__' not in probe.stdout or '__clang__' in probe.stdout:
        return []
    pch_dir = os.path.join(tmp, 'pch')
    gch = os.path.join(pch_dir, header + '.gch')
    os.makedirs(os.path.dirname(gch), exist_ok=True)
    src = os.path.join(tmp, 'pch_source.hpp')
    with open(src, 'w', encoding='utf-8') as f:
        f.write(f'#include <{header}>\n')
    r = subprocess.run(cc + ['-x', 'c++-header', src, '-o', gch], capture_output=True, text=True)
    return ['-I' + pch_dir] if r.returncode == 0 else []


def parse(args):
    """(README, built precompiled header (DIR, HEADER) or None, REPORT or None, compiler)."""
    if '--' not in args or args.index('--') < 1:
        raise SystemExit(__doc__)
    head, compiler = args[:args.index('--')], args[args.index('--') + 1:]
    readme, rest = head[0], head[1:]
    built_pch, record = None, None
    while rest:
        if rest[0] == '--pch' and len(rest) >= 3:
            built_pch, rest = (rest[1], rest[2]), rest[3:]
        elif rest[0] == '--record' and len(rest) >= 2:
            record, rest = rest[1], rest[2:]
        else:
            raise SystemExit(__doc__)
    if not compiler:
        raise SystemExit(__doc__)
    return readme, built_pch, record, compiler


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == '--replay':
        return recorded_check.replay(args[1])
    readme, built_pch, record, compiler = parse(args)
    with open(readme, encoding='utf-8') as f:
        lines = f.read().split('\n')
    found = list(blocks(lines))
    if not found:
        raise SystemExit(f'{readme}: no ```cpp blocks')
    name = os.path.basename(readme)
    tus = [translation_unit(readme, code, decls) for _, code, decls in found]
    with tempfile.TemporaryDirectory() as tmp:
        common, uses = collections.Counter(first_include(tu) for tu in tus).most_common(1)[0]
        pch_flags = []
        if common and uses >= 3:
            if built_pch and built_pch[1] == common and os.path.exists(os.path.join(built_pch[0], common + '.gch')):
                pch_flags = ['-I' + built_pch[0]]
            else:
                pch_flags = precompile(compiler, common, tmp)
        if pch_flags:
            pch_flags.append('-Winvalid-pch')  # a header GCC finds but cannot use says so
        # the .gch's directory goes before the build's -I: GCC takes the first match
        n = next((i for i, a in enumerate(compiler) if a.startswith('-')), len(compiler))
        program, options = compiler[:n], compiler[n:]

        def compile_unit(job):
            name_k, text = job
            src = os.path.join(tmp, f'{name_k}.cpp')
            with open(src, 'w', encoding='utf-8') as f:
                f.write(text)
            deps = ['-MD', '-MF', src[:-4] + '.d'] if record else []
            return subprocess.run(program + pch_flags + options + ['-fsyntax-only', src] + deps, capture_output=True,
                                  text=True)

        # Loading the precompiled header is most of a block's time (0.5 of 0.75 s): blocks
        # that include the same headers compile as one unit; a unit that fails is compiled
        # again block by block, so every verdict and diagnostic is the block's own.
        groups = collections.defaultdict(list)
        units = []  # [block index]
        for k, (_, code, _) in enumerate(found):
            key = group_key(code)
            if key is None:
                units.append([k])
            else:
                if not groups[key]:
                    units.append(groups[key])
                groups[key].append(k)
        jobs = [(f'unit_{u}', tus[ks[0]] if len(ks) == 1 else grouped_unit(readme, [found[k] for k in ks]))
                for u, ks in enumerate(units)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            unit_results = list(pool.map(compile_unit, jobs))
            results = [None] * len(found)
            again = []
            for ks, r in zip(units, unit_results):
                if r.returncode == 0 or len(ks) == 1:
                    for k in ks:
                        results[k] = r
                else:
                    again += ks
            for k, r in zip(again, pool.map(compile_unit, [(f'snippet_{k}', tus[k]) for k in again])):
                results[k] = r
        headers = [h for h in recorded_check.dependencies(os.path.join(tmp, f) for f in sorted(os.listdir(tmp)) if f.endswith('.d'))
                   if not h.startswith(tmp)]  # the units' own sources are gone with tmp
        if pch_flags and built_pch:
            headers.append(os.path.join(built_pch[0], common + '.gch'))  # remade when a header it reads changes
    out = []
    failed = 0
    for (fence, code, _), tu, r in zip(found, tus, results):
        own = sum(1 for n, _ in code if n > fence)
        if r.returncode == 0:
            out.append(f'ok   {name}:{fence}: ```cpp block ({own} lines)')
        else:
            failed += 1
            out.append(f'FAIL {name}:{fence}: ```cpp block does not compile:')
            out.append(r.stdout + r.stderr)
            out.append('--- the translation unit:')
            out.append(tu)
    pch = f', <{common}> precompiled' if pch_flags else ''
    ignored = sum(1 for r in unit_results + [results[k] for k in again] if 'not used because' in r.stderr)
    if ignored:
        pch += f' but not used by {ignored} units (built with other options?)'
    regrouped = f'; {len(again)} blocks compiled again alone after their unit failed' if again else ''
    out.append(f'{len(found) - failed} of {len(found)} README C++ blocks compile ({len(units)} units{regrouped}){pch}')
    status = 1 if failed else 0
    if not record:
        print('\n'.join(out))
        return status
    recorded_check.write(record, status, '\n'.join(out) + '\n', [readme] + headers)
    return 0


if __name__ == '__main__':
    sys.exit(main())
