"""Run a module's harness as it runs on a GPU without griddepcontrol.

    python3 gpu/nopdl.py kernels/sm86/harness.py ARGS...

The sm_80, sm_86 and sm_89 modules launch their combine with programmatic
dependent launch, and their tiles signal it, only where the device has
griddepcontrol (`_pdl`: compute capability 9 or more). On the lent H200 that
is true, so their harnesses there would time a call those GPUs never make.
This loads the harness as it is and gives every module it loads a `_pdl`
that answers False, which is what the module's own `_pdl` answers on those
GPUs. Nothing else changes: the kernels, launches and selections are the
module's.
"""

import importlib.util
import sys


def main():
    path = sys.argv[1]
    spec = importlib.util.spec_from_file_location("harness", path)
    harness = importlib.util.module_from_spec(spec)
    sys.argv = [path] + sys.argv[2:]
    spec.loader.exec_module(harness)
    load = harness.load_module

    def load_module(module_path):
        module = load(module_path)
        if hasattr(module, "_pdl"):
            module._pdl = lambda device: False
        return module

    harness.load_module = load_module
    return harness.main()


if __name__ == "__main__":
    sys.exit(main())
