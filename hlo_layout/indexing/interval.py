"""Inclusive integer intervals, the bounds of every variable and constraint in an indexing map.

Mirrors XLA's `Interval` (xla/hlo/analysis/interval.h): both ends inclusive, empty when lo > hi.
Arithmetic is exact (Python integers), so unlike XLA nothing saturates at the int64 limits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Interval:
    """`[lo, hi]`, both ends included; `Interval(0, -1)` is the canonical empty interval."""

    lo: int
    hi: int

    @staticmethod
    def point(value: int) -> Interval:
        return Interval(value, value)

    @property
    def is_feasible(self) -> bool:
        return self.lo <= self.hi

    @property
    def is_empty(self) -> bool:
        return self.lo > self.hi

    @property
    def is_point(self) -> bool:
        return self.lo == self.hi

    @property
    def size(self) -> int:
        """Number of integers in the interval (0 when empty)."""
        return max(0, self.hi - self.lo + 1)

    def contains(self, value: int | Interval) -> bool:
        """Whether a value, or a whole interval (both of its ends), lies inside."""
        if isinstance(value, Interval):
            return self.lo <= value.lo and value.hi <= self.hi
        return self.lo <= value <= self.hi

    def intersect(self, other: Interval) -> Interval:
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def union(self, other: Interval) -> Interval:
        """The smallest interval holding both (the convex hull)."""
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def __add__(self, other: Interval | int) -> Interval:
        if isinstance(other, int):
            return Interval(self.lo + other, self.hi + other)
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __sub__(self, other: Interval | int) -> Interval:
        if isinstance(other, int):
            return Interval(self.lo - other, self.hi - other)
        return Interval(self.lo - other.hi, self.hi - other.lo)

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __mul__(self, other: Interval | int) -> Interval:
        if isinstance(other, int):
            other = Interval(other, other)
        products = (
            self.lo * other.lo,
            self.lo * other.hi,
            self.hi * other.lo,
            self.hi * other.hi,
        )
        return Interval(min(products), max(products))

    def floordiv(self, divisor: int) -> Interval:
        """Floor of both ends (swapped for a negative divisor), as XLA's `Interval::FloorDiv`."""
        a, b = self.lo // divisor, self.hi // divisor
        return Interval(min(a, b), max(a, b))

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"
