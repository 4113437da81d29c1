"""Evaluation through call chains as deep as the user wrote them, without Python recursion.

Thousands of nested `call`s are valid HLO; a recursive walk over them would hit Python's
recursion limit. A walk is written as a generator that *yields* a request where it would recurse
and is *sent* the answer; `run_nested` keeps the pending generators on an explicit stack. The
order of work is that of the recursive definition."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TypeVar

Request = TypeVar("Request")
Answer = TypeVar("Answer")


def run_nested(
    first: Generator[Request, Answer, Answer],
    expand: Callable[[Request], Generator[Request, Answer, Answer]],
) -> Answer:
    """Run `first`; each request it (or a generator it starts) yields is answered by running
    `expand(request)` to its return value, which is sent back to the requester."""
    stack = [first]
    sent: Answer | None = None
    result: Answer | None = None
    while stack:
        try:
            request = stack[-1].send(sent)  # type: ignore[arg-type]  # None starts a generator
        except StopIteration as done:
            stack.pop()
            result = sent = done.value
            continue
        stack.append(expand(request))
        sent = None
    return result  # type: ignore[return-value]  # `first` always returns
