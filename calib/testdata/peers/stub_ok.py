"""A peer of one's own (harness --peers file:PATH) that computes the whole
call right."""

import _attend

NAME = "stub-ok"


def whole_call(**kw):
    return _attend.attend(kw, sink_in_lse=True)
