#!/usr/bin/env python3
"""Compiles every ```cpp block of README.md (meson test --suite readme).

    check_snippets.py README.md -- COMPILER [FLAGS...]

Each block becomes one translation unit, compiled with `COMPILER FLAGS -fsyntax-only`:
its #includes, `using` lines and top-level declarations (struct/class/template/namespace
blocks and BOOST_HANA_ macros) stay at file scope; the remaining statements go into a
function body. A block with its own `int main` is compiled as it stands. Names a block
uses without declaring them (the user's data, such as `X`) are declared by an HTML comment
on the line before the fence, which GitHub does not show:

    <!-- snippet: mg::Array X, W; -->

`#line` directives make every diagnostic name the README and the block's own line numbers.
A block that does not compile fails the test with its README line and the compiler's error.
"""
import os
import re
import subprocess
import sys
import tempfile

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
    """(first code line number, code lines, context) for each ```cpp block; 1-based lines."""
    i = 0
    while i < len(lines):
        if lines[i].strip() == '```cpp':
            context = ''
            if i > 0:
                m = CONTEXT.search(lines[i - 1])
                context = m.group(1).strip() if m else ''
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != '```':
                j += 1
            if j == len(lines):
                raise SystemExit(f'line {i + 1}: ```cpp block is not closed')
            yield start + 1, lines[start:j], context
            i = j
        i += 1


def translation_unit(path, first, code, context):
    """The block as a TU: file-scope lines first, statements inside a function."""
    if any(re.match(r'\s*int\s+main\s*\(', line) for line in code):
        return f'#line {first} "{path}"\n' + '\n'.join(code) + '\n'
    top, body = [], []  # (README line, text)
    depth = 0          # braces open in the current top-level declaration
    in_decl = False
    for n, line in enumerate(code, first):
        if not in_decl and TOP_LEVEL.match(line):
            in_decl = not line.lstrip().startswith('#')
        if in_decl or line.lstrip().startswith('#'):
            top.append((n, line))
            code = code_of(line)
            depth += code.count('{') - code.count('}')
            if in_decl and depth == 0 and code.rstrip().endswith((';', '}', ')')):
                in_decl = False
        else:
            body.append((n, line))

    def emit(chunk):
        out, prev = [], None
        for n, line in chunk:
            if prev is None or n != prev + 1:
                out.append(f'#line {n} "{path}"')
            out.append(line)
            prev = n
        return out

    tu = emit(top)
    tu.append('#line 1 "snippet-wrapper"')
    tu.append('[[maybe_unused]] static void readme_snippet() {')
    if context:
        tu.append(f'#line {first - 2} "{path}"')  # the <!-- snippet: --> comment's line
        tu.append(context)
    tu += emit(body)
    tu.append('}')
    return '\n'.join(tu) + '\n'


def main():
    args = sys.argv[1:]
    if len(args) < 3 or '--' not in args:
        raise SystemExit(__doc__)
    readme, compiler = args[0], args[args.index('--') + 1:]
    with open(readme, encoding='utf-8') as f:
        lines = f.read().split('\n')
    found = list(blocks(lines))
    if not found:
        raise SystemExit(f'{readme}: no ```cpp blocks')
    name = os.path.basename(readme)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, (first, code, context) in enumerate(found):
            tu = translation_unit(readme, first, code, context)
            src = os.path.join(tmp, f'snippet_{k}.cpp')
            with open(src, 'w', encoding='utf-8') as f:
                f.write(tu)
            r = subprocess.run(compiler + ['-fsyntax-only', src], capture_output=True, text=True)
            if r.returncode == 0:
                print(f'ok   {name}:{first - 1}: ```cpp block ({len(code)} lines)')
            else:
                failed += 1
                print(f'FAIL {name}:{first - 1}: ```cpp block does not compile:')
                print(r.stdout + r.stderr)
                print('--- the translation unit:')
                print(tu)
    print(f'{len(found) - failed} of {len(found)} README C++ blocks compile')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
