"""perfkit's start-up hook in a traced Python program.

`perfkit run --pytorch=modules`, `--python-sampling` or
`--python-backtrace=cuda` put this folder first on PYTHONPATH, so Python
imports this file at start-up: it installs perfkit_hook (which does nothing
until what was asked for applies: torch imported, or stacks to record), then
runs the program's own sitecustomize, if it has one further along the path,
as if this one were not there. Nothing here may break the program: a
failure is said once on stderr and the program runs on untouched.
"""
import os
import sys


def _chain_to_program_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    rest = [p for p in sys.path if os.path.realpath(os.path.abspath(p or ".")) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    import perfkit_hook

    perfkit_hook.install()
except Exception as exc:  # the program must run whatever happens here
    sys.stderr.write("perfkit: the Python hook is off: %s\n" % (exc,))

_chain_to_program_sitecustomize()
