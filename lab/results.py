"""Reading a lab device call's results back (lab/cs120, lab/lazy120,
lab/rs120, lab/tp8 and lab/tpheads's tables)."""

import json
import os


def load(work, name):
    """work/name's JSON, or {} with a line saying it is missing (a step
    that did not finish leaves no file)."""
    path = os.path.join(work, name)
    if not os.path.exists(path):
        print(f"{name}: missing (its step did not finish)")
        return {}
    with open(path) as f:
        return json.load(f)
