"""Whether the upstream keeps up: a second in which its event loop ran a timer
more than LATE late, or in which it used more than BUSY of a core, is a
saturated second. Its answers are then late, and what is measured through
it is partly its own slowness: it says so on stderr once per stretch of such
seconds, and counts them (GET /stats: saturated_seconds)."""

import sys
import time

TICK = 0.1  # seconds between two looks at the loop
WINDOW = 1.0  # seconds judged together
LATE = 0.02  # a timer this late: the loop had other work queued for that long
BUSY = 0.9  # of one core: the one thread the service runs on


class Watcher:
    def __init__(self, loop, stats, stream=sys.stderr):
        self.loop = loop
        self.stats = stats
        self.stream = stream
        self.handle = None
        self.expected = self.window_start = self.window_cpu = 0.0
        self.worst = 0.0  # the latest timer of the window, seconds late
        self.stretch = 0  # saturated seconds in a row

    def start(self):
        self.window_start = self.loop.time()
        self.window_cpu = time.process_time()
        self.schedule(self.window_start)

    def stop(self):
        if self.handle is not None:
            self.handle.cancel()

    def schedule(self, now):
        self.expected = now + TICK
        self.handle = self.loop.call_at(self.expected, self.tick)

    def tick(self):
        now = self.loop.time()
        self.worst = max(self.worst, now - self.expected)
        if now - self.window_start >= WINDOW:
            self.judge(now)
        self.schedule(now)

    def judge(self, now):
        """Close the window that ends now: saturated or not, and say so."""
        cpu = time.process_time()
        busy = (cpu - self.window_cpu) / (now - self.window_start)
        saturated = busy > BUSY or self.worst > LATE
        if saturated:
            self.stats.saturated_seconds += 1
            if not self.stretch:
                self.say(
                    f"upstream: saturated: {busy:.0%} of a core used, a timer run "
                    f"{self.worst * 1000:.0f} ms late: its answers are late (this "
                    "process, or the machine's CPUs, are full)"
                )
            self.stretch += 1
        elif self.stretch:
            self.say(f"upstream: keeps up again, after {self.stretch} s saturated")
            self.stretch = 0
        self.stats.saturated = saturated
        self.window_start, self.window_cpu, self.worst = now, cpu, 0.0

    def say(self, line):
        print(line, file=self.stream, flush=True)
