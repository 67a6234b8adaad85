"""Runs a module of the Plansight server that ships inside the extension, on the user's Python.

    python -I -u launch.py plansight lsp          # the language server
    python -I -u launch.py plansight.fakeapi ...  # the demo's fake Messages API
    python -I -u launch.py -c CODE                # a snippet (the demo's recordings folder)

The packages sit beside this file, as scripts/bundle-python.mjs lays them out: `libs/common`
(pure Python and abi3 wheels, the same for every CPython) and `libs/cp3XX` (the compiled parts
built for one CPython version), and `bin/rg` (ripgrep, for the grep tool). They go on
`sys.path` here, in this process only, not on PYTHONPATH: the agent's commands inherit the
server's environment, and the user's own `python` or `pytest` must not see these packages.
`-I` keeps the user's PYTHONPATH and user site out of the server in turn. `bin/` goes last on
PATH, so that an `rg` the user installed still wins.

The extension checks the interpreter's version first and says what it needs; the check here
is for someone who runs this file by hand. Written for any Python, so that an old one reads
the message rather than a syntax error.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def libs_for(version):
    tag = "cp%d%d" % (version[0], version[1])
    return [os.path.join(HERE, "libs", tag), os.path.join(HERE, "libs", "common")]


def main(argv):
    if len(argv) < 1:
        sys.stderr.write(__doc__)
        return 2
    folders = libs_for(sys.version_info)
    if not os.path.isdir(folders[0]):
        have = sorted(n for n in os.listdir(os.path.join(HERE, "libs")) if n.startswith("cp"))
        sys.stderr.write(
            "The Plansight server bundled here is built for %s; this is Python %d.%d (%s).\n"
            % (", ".join(have), sys.version_info[0], sys.version_info[1], sys.executable)
        )
        return 3
    sys.path[0:0] = folders
    os.environ["PATH"] = os.pathsep.join(
        p for p in (os.environ.get("PATH", ""), os.path.join(HERE, "bin")) if p
    )
    import runpy

    if argv[0] == "-c":
        sys.argv = ["-c"] + argv[2:]
        code = compile(argv[1], "<string>", "exec")
        exec(code, {"__name__": "__main__"})
        return 0
    sys.argv = list(argv)
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
