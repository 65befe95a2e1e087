"""Is this Python one the pinned requirements support? One line and exit 1 when it is not.

    python3.13 tools/dev/check_python.py                       # the interpreter running it
    python tools/dev/check_python.py --version-string 3.11.2   # any version (the tests use this)
    .venv/bin/python tools/dev/check_python.py --venv .venv    # the Python .venv was made with

The range is `requires-python` in pyproject.toml, the one place it is written. `make install`
runs this with the interpreter it is about to use, before creating .venv: an unsupported Python
otherwise fails deep in pip's resolver, minutes later, without naming the cause.

It runs on whatever Python a reader has, so it keeps to syntax that Python 2.7 and 3.6 parse (no
f-strings, no annotations) and reads the TOML with a regex (tomllib is 3.11+).
"""

from __future__ import print_function

import argparse
import io
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYPROJECT = os.path.join(ROOT, "pyproject.toml")
CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*$")


def requires_python(path=PYPROJECT):
    """The requires-python string of pyproject.toml's [project] table."""
    with io.open(path, encoding="utf-8") as handle:
        found = re.search(r'^requires-python\s*=\s*"([^"]+)"', handle.read(), re.MULTILINE)
    if found is None:
        raise SystemExit("pyproject.toml has no requires-python")
    return found.group(1)


def _numbers(version):
    """(3, 13, 0) for "3.13.0" (and for "3.13.0rc1": a pre-release counts as its release)."""
    return tuple(int(part) for part in re.match(r"\d+(?:\.\d+)*", version).group(0).split("."))


def _padded(a, b):
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def supports(spec, version):
    """Whether a version ("3.11.2") meets every clause of spec (">=3.11.5,<3.14")."""
    tests = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
             "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
    for clause in spec.split(","):
        match = CLAUSE.match(clause)
        if match is None:
            raise SystemExit("requires-python clause not understood: %r" % clause)
        found, needed = _padded(_numbers(version), _numbers(match.group(2)))
        if not tests[match.group(1)](found, needed):
            return False
    return True


def newest_minor(spec):
    """The newest Python minor release the spec allows ("3.13" for "<3.14"), to suggest."""
    for clause in spec.split(","):
        match = CLAUSE.match(clause)
        if match and match.group(1) == "<":
            major, minor = (_numbers(match.group(2)) + (0,))[:2]
            if minor:
                return "%d.%d" % (major, minor - 1)
    return "3"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version-string", help="check this version, not the running Python's")
    parser.add_argument("--name", help="the interpreter, as the user named it")
    parser.add_argument("--venv", help="the running Python is this venv's: advise removing it")
    parser.add_argument("--goal", default="install", help="the make goal to suggest")
    parser.add_argument("--advice", help="what to do instead, when not `make <goal> PYTHON=...`")
    args = parser.parse_args(argv)
    name = args.name or ("The version given" if args.version_string else sys.executable)
    version = args.version_string or "%d.%d.%d" % tuple(sys.version_info[:3])
    spec = requires_python()
    if supports(spec, version):
        return 0
    needed = "Python %s (requires-python in pyproject.toml)" % spec
    other = "make %s PYTHON=python%s" % (args.goal, newest_minor(spec))
    if args.venv:
        line = "%s was made with Python %s, but the guide needs %s: rm -rf %s, then %s" % (
            args.venv, version, needed, args.venv, other)
    else:
        line = "%s is Python %s, but the guide needs %s: %s" % (
            name, version, needed, args.advice or "pick another, e.g. " + other)
    print(line, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
