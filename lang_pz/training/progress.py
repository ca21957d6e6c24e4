"""Progress of one step (episodes, critic calls, optimiser calls): a tqdm bar on a terminal, else a
plain line on stderr at a bounded rate.

Without a terminal (a log file, CI, ``nohup``) a bar would be drawn as a stream of carriage
returns, and tqdm with ``disable=None`` draws nothing, so a long run said nothing between its
iteration lines. :func:`progress` writes ``DESC: done/total, N LLM calls, elapsed Xs, ETA Ys``
there instead: every :data:`EVERY` seconds while the step runs (also while one long item is
still going: the LLM calls tell that it moves), and once when the step ends.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

#: Least seconds between two plain progress lines of one step.
EVERY = 30.0


class Lines:
    """A counter with tqdm's ``update`` / ``close`` that writes plain lines (module docstring).

    Args:
        total: how many items the step has.
        desc: what the line starts with (e.g. ``iter 0 episodes``).
        calls: LLM calls of the iteration so far (shown on each line unless it gives ``None``).
        stream: where the lines go (default: stderr).
        every: seconds between two lines while the step runs (a daemon thread writes them).
    """

    def __init__(
        self,
        total: int,
        desc: str,
        calls: Callable[[], int | None] | None = None,
        stream: IO[str] | None = None,
        every: float = EVERY,
    ) -> None:
        self.total, self.desc, self.calls, self.every = total, desc, calls, every
        self.stream = stream or sys.stderr
        self.done = 0
        self.t0 = self.said = time.monotonic()
        self._closed = threading.Event()
        if total:
            threading.Thread(target=self._beat, name=f"progress {desc}", daemon=True).start()

    def _beat(self) -> None:
        while not self._closed.wait(self.every):
            self._say()

    def update(self, n: int = 1) -> None:
        """``n`` more items are done."""
        self.done += n

    def close(self) -> None:
        """The step ended: its last line (none for a step of no items)."""
        if self._closed.is_set():
            return
        self._closed.set()
        if self.total:
            self._say()

    def _say(self) -> None:
        now = time.monotonic()
        self.said, elapsed = now, now - self.t0
        n = self.calls() if self.calls is not None else None
        calls = f", {n} LLM calls" if n is not None else ""
        left = self.total - self.done
        eta = f", ETA {elapsed / self.done * left:.0f}s" if self.done and left > 0 else ""
        print(f"{self.desc}: {self.done}/{self.total}{calls}, elapsed {elapsed:.0f}s{eta}", file=self.stream, flush=True)


def progress(total: int, desc: str, calls: Callable[[], int | None] | None = None) -> Any:
    """A tqdm bar when stderr is a terminal, else :class:`Lines` (module docstring)."""
    if sys.stderr.isatty():
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, leave=False)
    return Lines(total, desc, calls)
