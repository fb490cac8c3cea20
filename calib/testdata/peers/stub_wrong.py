"""A peer whose output is 10% off: its rows must fail the check."""

import _attend

NAME = "stub-wrong"


def declines(kw):
    return "more than 64 heads" if kw["q"].shape[2] > 64 else None


def whole_call(**kw):
    out, lse = _attend.attend(kw, sink_in_lse=True)
    return (out.float() * 1.1).to(out.dtype), lse
