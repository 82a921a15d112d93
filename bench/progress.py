"""What runs now and how long is left of the run's plan (bench/plan.py), as
the steps are taken; and the one way the harness speaks."""

import time

STARTUP_SECONDS = 5  # what an app's start is planned to take, before it is measured
RUN_OVERHEAD_SECONDS = 1  # likewise, around each wrk run: settle, count, reset


def say(message):
    print(message, flush=True)


def duration_text(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class Progress:
    """What runs now, and how long is left: the steps still planned, each
    costed at what the steps of its kind have really taken so far (at a nominal
    figure until one has finished). Starting an app, settling and resetting
    around a run cost more than nominal figures say, and differ by machine."""

    def __init__(self, plan):
        """plan: {kind: (number of steps, nominal seconds each)}."""
        self.count = {kind: count for kind, (count, _) in plan.items()}
        self.nominal = {kind: seconds for kind, (_, seconds) in plan.items()}
        self.taken = {kind: [] for kind in plan}
        self.running = None  # (kind, when it started) of the step under way

    def cost(self, kind):
        taken = self.taken[kind]
        return sum(taken) / len(taken) if taken else self.nominal[kind]

    def left(self):
        """Seconds left, counting the step under way as a whole one."""
        return sum(count * self.cost(kind) for kind, count in self.count.items())

    def step(self, kind, message):
        now = time.monotonic()
        if self.running:
            self.taken[self.running[0]].append(now - self.running[1])
        self.running = (kind, now)
        say(f"  {message} (about {duration_text(self.left())} left)")
        self.count[kind] = max(self.count[kind] - 1, 0)
