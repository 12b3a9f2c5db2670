# Written by `memtriage run` beside its sitecustomize (opt out: `--no-python-lines`).
# In every Python process of the job (a forked child starts its own), a daemon thread
# measures, 10 times a second, what the process's memory did since the last time
# (anonymous, file-backed and shared resident memory from /proc/self/status; minor and
# major faults from getrusage) and charges it to the Python lines that made it grow:
#
# - The main thread's lines, from its page faults: the kernel counts them
#   (perf_event_open) and signals the thread every `period` faults; faulthandler's
#   signal-safe handler writes the thread's Python stack, at the fault, into a pipe
#   that the thread here reads. Native allocations (numpy, torch CPU tensors) thus
#   land on the Python line that called them, inside the call.
# - What those samples do not cover (other threads, or a kernel that refuses the
#   counter), from where each thread is when measured, shared by their faults.
#
# Memory given back is credited to the lines that grew most recently (last in, first
# out), so a line whose growth is never given back is told from one that rises and
# falls with each step. In a forked child, faults that added no resident memory are
# pages copied on write, charged to the line that touched them.
#
# The table is written to MEMTRIAGE_LINES_DIR/<pid>.json (a new file renamed over the
# old, every half second, and at exit, os._exit included), so what a SIGKILLed process
# measured is still there for `memtriage run` to read. Nothing here changes what the
# job computes; a failure stops the measurement, never the job.
import bisect
import os
import sys
import threading
import time

_PAGE = os.sysconf("SC_PAGE_SIZE")
_TOP_LINES = 60
_PATH_DEPTH = 12
_SERIES_POINTS = 64
_LIFO_SEGMENTS = 4096
_KINDS = ("anon", "file", "shmem")
# Growth since the last write that makes the next write at once.
_WRITE_AFTER_GROWTH = 32 << 20
# Fault samples a second, at most: past it, the period doubles until it is not.
_MAX_SAMPLES_PER_SECOND = 100
_DUMPS_REMEMBERED = 4096


class _Line:
    """One line's figures: growth per kind, what of it was given back, faults."""

    __slots__ = (
        "grown", "returned", "copied", "minflt", "majflt", "ticks",
        "first", "last", "paths", "series", "thread", "episodes", "importing",
    )

    def __init__(self, t):
        self.grown = [0, 0, 0]
        self.returned = [0, 0, 0]
        self.copied = 0
        self.minflt = 0
        self.majflt = 0
        self.ticks = 0
        self.first = t
        self.last = t
        self.paths = {}
        self.series = []
        self.thread = None
        self.episodes = 0
        # Of `grown`, what grew while a module was being imported (its code, its
        # libraries): a line that runs an import, however long, is not a leak.
        self.importing = 0

    def kept(self, k):
        return self.grown[k] - self.returned[k]


class _Sampler:
    def __init__(self, out_dir, epoch, started, parent, inherited=frozenset(), signal_below_max=3):
        self.out_dir = out_dir
        self.inherited = inherited
        self.epoch = epoch
        self.started = started
        self.parent = parent
        self.pid = os.getpid()
        try:
            self.interval = max(0.005, 1.0 / float(os.environ.get("MEMTRIAGE_LINES_HZ", "10")))
        except ValueError:
            self.interval = 0.1
        self.lines = {}
        self.locations = {}
        self.lifo = ([], [], [])
        self.prev_threads = {}
        self.ticks = 0
        self.first_t = None
        self.last_t = None
        self.dirty = True
        self.next_flush = 0.0
        self.flushes = 0
        self.failed = None
        self.thread = None
        self.cpu = 0.0
        self.measuring = threading.Lock()
        # One write at a time (the thread's and the exit's), none after the last.
        self.writing = threading.Lock()
        self.written_final = False
        self.known_role = None
        self.last_charged = {}
        self.last_at = {}
        self.done = False
        # Set by stop(): the loop's wait ends at once, where a sleep made every
        # measured block's end wait up to a whole interval for the thread.
        self.woken = threading.Event()
        self.samples = 0
        self.pace_since = time.monotonic()
        self.pace_samples = 0
        self.dumped = {}
        self.status_fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        # From here: what a forked child does is its own.
        self.prev = self.counters()
        self.held_series = []
        self.held_at_flush = self.prev[0][0] + self.prev[0][2]
        self.faults = _FaultStacks(signal_below_max)
        self.pages = _FollowedPages(self.lines)
        # Fault samples without and with their page.
        self.sample_pages = [0, 0]

    # -- reading the process ---------------------------------------------------------

    def counters(self):
        """Resident anonymous, file and shared bytes, and the fault counters."""
        text = _pread(self.status_fd, 8192, 0)
        rss = [0, 0, 0]
        for i, key in enumerate((b"RssAnon:", b"RssFile:", b"RssShmem:")):
            at = text.find(key)
            if at >= 0:
                rss[i] = int(text[at + len(key):text.index(b"kB", at)]) * 1024
        ru = _resource.getrusage(_resource.RUSAGE_SELF)
        return rss, ru.ru_minflt, ru.ru_majflt

    def thread_faults(self, tids):
        """Minor plus major faults of each thread, by native id."""
        out = {}
        for tid in tids:
            try:
                with open("/proc/self/task/%d/stat" % tid, "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                out[tid] = int(fields[7]) + int(fields[9])
            except (OSError, IndexError, ValueError):
                pass
        return out

    def measure(self):
        """What the process's memory did since the last measurement: the kinds'
        growth (what shrank is given back to the latest growers), the pages copied on
        write, the faults; `None` when nothing moved."""
        rss, minflt, majflt = self.counters()
        t = time.monotonic() - self.epoch
        if self.first_t is None:
            self.first_t = t
        self.last_t = t
        prev = self.prev
        self.prev = (rss, minflt, majflt)
        delta = [rss[k] - prev[0][k] for k in range(3)]
        dmin = minflt - prev[1]
        dmaj = majflt - prev[2]
        grown = [max(0, d) for d in delta]
        copied = 0
        if self.started == "fork" and min(delta) >= 0 and sum(grown) * 10 < dmin * _PAGE:
            # Faults that added no resident memory: pages copied on write. Where
            # memory shrank or grew meanwhile, refaults of freed memory look the
            # same: nothing is counted then.
            copied = max(0, dmin * _PAGE - sum(grown))
        if any(delta) or dmin or dmaj:
            self.dirty = True
        return t, delta, grown, copied, dmin, dmaj

    # -- charging --------------------------------------------------------------------

    def tick(self):
        if not self.measuring.acquire(False):
            return
        try:
            self.ticks += 1
            samples = self.faults.read()
            t, delta, grown, copied, dmin, dmaj = self.measure()
            self.pace(len(samples))
            shrank = [max(0, -d) for d in delta]
            freed = self.pages.check(t, force=False) if any(shrank) else [0, 0, 0]
            for k in range(3):
                # What the tracked pages do not explain goes back to the latest growers.
                if shrank[k] > freed[k]:
                    self.give_back(k, shrank[k] - freed[k])
            if not any(grown) and dmin == 0 and dmaj == 0:
                return
            rest = 1.0
            if samples and dmin + dmaj > 0:
                rest -= self.charge_samples(t, samples, grown, copied, dmin, dmaj)
            if rest > 0.01:
                self.charge_threads(rest, t, grown, copied, dmin, dmaj)
        finally:
            self.measuring.release()

    def charge_samples(self, t, samples, grown, copied, dmin, dmaj):
        """Charges the main thread's fault samples, each `period` faults of the
        line it names, split into kinds as the measurement splits the faults; a
        sample's page, where known, is followed until it is given back. Returns the
        share of the faults the samples covered."""
        faults = dmin + dmaj
        period = self.faults.period
        covered = min(1.0, len(samples) * period / faults)
        each = covered / len(samples)
        fault_bytes = faults * _PAGE
        # Of a sample's bytes: copies after a fork (faults that added nothing
        # resident), file and shared growth, the rest anonymous (first touches of
        # fresh memory). (A page in a mapping the parent had is not a copy for that:
        # malloc reuses the inherited heap's free space.)
        copy_part = min(1.0, copied / fault_bytes)
        kind_part = [0.0, min(1.0, grown[1] / fault_bytes), min(1.0, grown[2] / fault_bytes)]
        growth_part = max(0.0, 1.0 - copy_part - kind_part[1] - kind_part[2])
        main = threading.main_thread().name
        for dump, taken_at in samples:
            where, path, importing = self.where_dumped(dump)
            if where is None:
                continue
            self.sample_pages[taken_at is not None] += 1
            if taken_at is None:
                # Not followed: its share of what the measurement saw grow, which
                # only a later shrink gives back.
                self.charge(t, where, path, main, each, grown, copied, dmin, dmaj,
                            importing=importing)
                continue
            page, faults_of_it = taken_at
            sample_bytes = faults_of_it * _PAGE
            share = [growth_part, kind_part[1], kind_part[2]]
            copy = int(sample_bytes * copy_part)
            taken = [int(sample_bytes * f) for f in share]
            self.charge(t, where, path, main, each, taken, copy,
                        dmin, dmaj, share_growth=False, page=page, importing=importing)
        return covered

    def where_dumped(self, dump):
        """The line and path of a dumped stack: a loop dumps the same few stacks
        over and over, each parsed once."""
        hit = self.dumped.get(dump)
        if hit is None:
            if len(self.dumped) >= _DUMPS_REMEMBERED:
                self.dumped.clear()
            hit = self.dumped[dump] = _where(_parse_dump(dump), self.inherited)
        return hit

    def pace(self, samples):
        """At most about _MAX_SAMPLES_PER_SECOND fault samples: a job that faults
        faster is sampled every more faults."""
        self.samples += samples
        now = time.monotonic()
        window = now - self.pace_since
        taken = self.samples - self.pace_samples
        # Judged each quarter of a second, or as soon as a quarter second's samples
        # came: importing torch alone faults a hundred thousand pages.
        if window >= 0.25 or taken > _MAX_SAMPLES_PER_SECOND / 4:
            rate = taken / max(window, 0.01)
            # Each sample costs the main thread a stack dump: past the rate, the
            # period grows by as much as it was over, at once.
            while rate > _MAX_SAMPLES_PER_SECOND and self.faults.slower():
                rate /= 2
            self.pace_since = now
            self.pace_samples = self.samples

    def charge_threads(self, scale, t, grown, copied, dmin, dmaj):
        """Charges a share `scale` of what moved to where the threads are now, each
        thread by its share of the faults."""
        me = threading.get_ident()
        sampler = self.thread.ident if self.thread is not None else me
        frames = {ident: f for ident, f in sys._current_frames().items() if ident != sampler}
        if not frames:
            return
        names = {}
        natives = {}
        for th in threading.enumerate():
            if th.ident in frames:
                names[th.ident] = th.name
                natives[th.ident] = getattr(th, "native_id", None)
        shares = {}
        if len(frames) > 1:
            now = self.thread_faults([n for n in natives.values() if n])
            moved = {}
            for ident, tid in natives.items():
                if tid in now:
                    moved[ident] = max(0, now[tid] - self.prev_threads.get(tid, now[tid]))
            self.prev_threads = now
            total = sum(moved.values())
            if total > 0:
                shares = {i: m / total for i, m in moved.items() if m > 0}
        if not shares:
            main = threading.main_thread().ident
            shares = {main if main in frames else next(iter(frames)): 1.0}
        for ident, share in shares.items():
            frame = frames.get(ident)
            if frame is None:
                continue
            if ident == me:
                # Measured from this very thread (its exit, the end of a block): it is
                # in memtriage's code now, so where it last grew stands for it.
                where, path = self.last_at.get(names.get(ident), (None, ()))
                if where is not None:
                    self.charge(t, where, path, names.get(ident), share * scale, grown, copied,
                                dmin, dmaj)
                continue
            where, path, importing = _where(_frames(frame), self.inherited)
            if where is not None and (_is_library(where[0]) or where in self.inherited):
                # Only where a thread waits now, not where it grew: said as such.
                where = ("<thread %s>" % names.get(ident, "?"), 0, "outside the job's code")
                path = (where,)
            if where is not None:
                self.charge(t, where, path, names.get(ident), share * scale, grown, copied,
                            dmin, dmaj, importing=importing)

    def charge(self, t, where, path, thread_name, share, grown, copied, minflt, majflt,
               share_growth=True, page=None, importing=False):
        """Charges `share` of what moved to `where` (the growth itself when
        `share_growth` is false: a sample's own bytes). Growth on a followed `page`
        is given back when the page goes; other growth through the LIFO."""
        entry = self.lines.get(where)
        if entry is None:
            entry = self.lines[where] = _Line(t)
        # A line run again (another line grew meanwhile, or it paused) is a new
        # episode: a loop's line has many, one long call one.
        last = self.last_charged.get(thread_name)
        if last is not where or t - entry.last > 0.03 or entry.episodes == 0:
            entry.episodes += 1
        self.last_charged[thread_name] = where
        self.last_at[thread_name] = (where, path)
        entry.last = t
        entry.ticks += 1
        scale = share if share_growth else 1.0
        taken = [int(grown[k] * scale) for k in range(3)]
        followed = any(taken) and page is not None and self.pages.follow(page, where, taken, t)
        if importing:
            entry.importing += sum(taken)
        for k in range(3):
            if taken[k] > 0:
                entry.grown[k] += taken[k]
                if not followed:
                    self.push(k, where, taken[k])
        entry.copied += int(copied * scale)
        entry.minflt += int(minflt * share)
        entry.majflt += int(majflt * share)
        entry.paths[path] = entry.paths.get(path, 0) + 1
        entry.thread = thread_name

    def push(self, k, where, amount):
        stack = self.lifo[k]
        if stack and stack[-1][0] == where:
            stack[-1][1] += amount
            return
        stack.append([where, amount])
        if len(stack) > _LIFO_SEGMENTS:
            # The oldest growth is the least likely to be given back: it stays kept.
            del stack[0]

    def give_back(self, k, amount):
        stack = self.lifo[k]
        while amount > 0 and stack:
            where, held = stack[-1]
            taken = min(held, amount)
            self.lines[where].returned[k] += taken
            amount -= taken
            if taken == held:
                stack.pop()
            else:
                stack[-1][1] = held - taken

    # -- writing ---------------------------------------------------------------------

    def role(self):
        """What the process is to the job, as soon as it is known; kept once known
        (a DataLoader worker forgets it when its loop ends)."""
        if self.known_role is None or self.known_role.startswith(("Fork", "Spawn", "Process")):
            self.known_role = self.find_role() or self.known_role
        return self.known_role

    def find_role(self):
        worker = sys.modules.get("torch.utils.data._utils.worker")
        info = getattr(worker, "_worker_info", None) if worker is not None else None
        rank = os.environ.get("RANK")
        of_rank = " of rank %s" % rank if rank is not None else ""
        if info is not None:
            try:
                return "DataLoader worker %d of %d%s" % (info.id, info.num_workers, of_rank)
            except Exception:
                pass
        mp = sys.modules.get("multiprocessing.process")
        if mp is not None:
            try:
                name = mp.current_process().name
                if name != "MainProcess":
                    return name + of_rank
            except Exception:
                pass
        if rank is not None:
            return "rank %s" % rank
        return None

    def location(self, loc):
        shown = self.locations.get(loc)
        if shown is None:
            text = None
            try:
                text = _linecache.getline(loc[0], loc[1]).strip() or None
            except Exception:
                pass
            shown = self.locations[loc] = {
                "file": loc[0], "line": loc[1], "function": loc[2], "text": text,
            }
        return shown

    def table(self, final):
        def weight(e):
            # What it holds, then what it takes at a time (a peak's rise) and its
            # major faults, so that lines that rose and fell or read files stay too.
            return (
                max(e.kept(0), 0) + max(e.kept(1), 0) + max(e.kept(2), 0) + e.copied
                + sum(e.grown) // max(1, e.episodes) + e.majflt * _PAGE
            )

        ranked = sorted(self.lines.items(), key=lambda kv: weight(kv[1]), reverse=True)
        lines = []
        for where, e in ranked[:_TOP_LINES]:
            _note_point(e.series, self.last_t, e.kept(0) + e.kept(2) + e.copied)
            path = max(e.paths.items(), key=lambda kv: kv[1])[0]
            entry = {
                "at": self.location(where),
                "user_code": not _is_library(where[0]) and where[1] != 0,
                "path": [self.location(p) for p in path],
                "thread": e.thread,
                "copied_after_fork": e.copied,
                "minor_faults": e.minflt,
                "major_faults": e.majflt,
                "ticks": e.ticks,
                "episodes": e.episodes,
                "grown_importing": e.importing,
                "first_seconds": round(e.first, 3),
                "last_seconds": round(e.last, 3),
                "series": e.series,
            }
            for k, name in enumerate(_KINDS):
                entry[name] = {"grown": e.grown[k], "kept": max(e.kept(k), 0)}
            lines.append(entry)
        # The process's own anonymous and shared memory over time: no line can have
        # kept more than the process grew.
        if self.last_t is not None:
            _note_point(self.held_series, self.last_t, self.prev[0][0] + self.prev[0][2])
        return {
            "held_series": self.held_series,
            "pid": self.pid,
            "ppid": self.parent,
            "started": self.started,
            "role": self.role(),
            "python": "%d.%d.%d" % sys.version_info[:3],
            "interval_ms": int(self.interval * 1000),
            "ticks": self.ticks,
            "first_seconds": self.first_t,
            "last_seconds": self.last_t,
            "hook_cpu_seconds": round(self.cpu, 4),
            "complete": final,
            "lines_not_kept": max(0, len(self.lines) - _TOP_LINES),
            "lines": lines,
            "failed": self.failed,
            "pinned_host": _pinned_host(),
            "fault_signals": self.samples,
            "fault_samples_followed": self.sample_pages[1],
            "fault_samples_unfollowed": self.sample_pages[0],
            "fault_period": self.faults.period if self.faults.unavailable is None else None,
            "fault_signals_unavailable": self.faults.unavailable,
        }

    def flush(self, final=False):
        if self.out_dir is None:
            # A block measured in-process: nothing written (stop() returns the
            # table), but the series over time are kept as for a file.
            self.table(final)
            self.dirty = False
            return
        if self.measuring.acquire(False):
            try:
                self.pages.check(self.last_t or 0.0, force=True)
            finally:
                self.measuring.release()
        with self.writing:
            if self.written_final:
                return
            path = os.path.join(self.out_dir, "%d.json" % self.pid)
            part = path + ".part"
            data = _json.dumps(self.table(final), separators=(",", ":"))
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, data.encode())
            finally:
                os.close(fd)
            os.replace(part, path)
            self.written_final = final
            self.dirty = False
            self.flushes += 1

    def loop(self):
        try:
            self.flush()
            while True:
                self.woken.wait(self.interval)
                if os.getpid() != self.pid:
                    return  # a fork's copy of this thread cannot exist, but be sure
                if self.done:
                    return
                self.tick()
                self.cpu = time.thread_time()
                now = time.monotonic()
                # A process growing this much since its last write may be killed
                # before the next: written now.
                grew = self.prev[0][0] + self.prev[0][2] - self.held_at_flush
                if self.dirty and (now >= self.next_flush or grew >= _WRITE_AFTER_GROWTH):
                    self.flush()
                    self.held_at_flush = self.prev[0][0] + self.prev[0][2]
                    # The first seconds count most for short processes: written more
                    # often. (A process that grows fast is written by its growth.)
                    self.next_flush = now + (0.1 if self.flushes < 5 else 0.5)
        except Exception as e:  # never the job's failure
            self.failed = "%s: %s" % (type(e).__name__, e)
            try:
                self.flush()
            except Exception:
                pass

    def stop(self):
        """The figures of a block measured in-process (`memtriage.track()`): the
        counter disabled, its signal handed back, the last measurement taken."""
        self.done = True
        self.woken.set()
        self.faults.close()
        self.faults.release()
        self.tick()
        if self.thread is not None:
            self.thread.join(timeout=2 * self.interval + 1.0)
        self.pages.check(self.last_t or 0.0, force=True)
        return self.table(final=True)

    def start(self):
        self.thread = threading.Thread(target=self.loop, name="memtriage-lines", daemon=True)
        self.thread.start()



class _FollowedPages:
    """The pages the fault samples landed on, followed for a few seconds: a page no
    longer present (/proc/self/pagemap) was given back, and so was the growth its
    sample stands for. What stays past `SETTLE_SECONDS` is kept for good. This tells
    the line that keeps memory from one beside it that frees its own, even when both
    grow in the same measurement.

    Freed memory is often faulted in again at the same addresses (the next step's
    buffers, a new mapping in the hole an old one left), after which its old pages
    read as present. A new fault at a page shows where that is happening: the
    followed pages around it (`NEAR` bytes) are checked then, before the refill
    reaches most of them."""

    SETTLE_SECONDS = 2.0
    MOST = 4096
    NEAR = 1 << 20
    # Pages checked around a new one, at most: each read of pagemap costs ~10 µs.
    NEAREST = 8

    def __init__(self, lines):
        try:
            self.fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = None
        self.lines = lines
        self.live = {}
        self.order = []  # the live pages, sorted
        self.checked = 0.0
        self.cost = 0.0

    def gone_now(self, page):
        """Neither present nor swapped out."""
        try:
            entry = int.from_bytes(_pread(self.fd, 8, (page // _PAGE) * 8), "little")
        except OSError:
            return False
        return not entry >> 62

    def follow(self, page, where, taken, t):
        if self.fd is None:
            return False
        at = bisect.bisect_left(self.order, page)
        lo = max(bisect.bisect_left(self.order, page - self.NEAR), at - self.NEAREST // 2)
        hi = min(bisect.bisect_right(self.order, page + self.NEAR), at + self.NEAREST // 2)
        for near in self.order[lo:hi]:
            # The page itself faulted again: it had been given back meanwhile.
            if near == page or self.gone_now(near):
                self.give_back(near)
        if len(self.live) >= self.MOST:
            self.forget(next(iter(self.live)))  # the oldest: kept for good
        self.live[page] = (where, taken, t)
        bisect.insort(self.order, page)
        return True

    def forget(self, page):
        held = self.live.pop(page)
        i = bisect.bisect_left(self.order, page)
        if i < len(self.order) and self.order[i] == page:
            del self.order[i]
        return held

    def give_back(self, page):
        where, taken, _ = self.forget(page)
        line = self.lines.get(where)
        if line is not None:
            for k in range(3):
                line.returned[k] += taken[k]
        return taken

    def check(self, t, force):
        """Gives back the growth of the followed pages no longer there, and settles
        those past `SETTLE_SECONDS`; returns the bytes given back by kind. Called
        when memory shrank, unless checking has taken more than a hundredth of the
        time, and before each write."""
        freed = [0, 0, 0]
        now = time.monotonic()
        if self.fd is None or not self.live:
            return freed
        if not force and now - self.checked < self.cost * 100:
            return freed
        self.checked = now
        for page, (_, _, since) in list(self.live.items()):
            if self.gone_now(page):
                taken = self.give_back(page)
                for k in range(3):
                    freed[k] += taken[k]
            elif t - since > self.SETTLE_SECONDS:
                self.forget(page)
        self.cost = time.monotonic() - now
        return freed


class _FaultStacks:
    """The main thread's Python stack every `period` of its page faults: the kernel's
    software page-fault counter (perf_event_open) signals the thread on overflow, and
    faulthandler's handler (C, signal-safe: it only reads the frames and writes) dumps
    the stack into a non-blocking pipe, at the fault, inside the call that faulted.
    Where the kernel refuses the counter (kernel.perf_event_paranoid, a container's
    seccomp), lines are charged by where the threads are when measured, and the
    table says why."""

    _NR = {"x86_64": 298, "aarch64": 241, "ppc64le": 319, "s390x": 331}
    _F_SETSIG = 10
    _F_SETOWN_EX = 15
    _F_SETPIPE_SZ = 1031
    _IOC_PERIOD = 0x40082404
    _IOC_DISABLE = 0x2401
    _IOC_ENABLE = 0x2400
    _MAX_PERIOD = 1 << 16
    _RING_PAGES = 8

    def __init__(self, signal_below_max=3):
        self.fd = None
        self.pipe = None
        self.signum = None
        self.signal_below_max = signal_below_max
        self.pending = b""
        self.ring = None
        self.backlog = []
        try:
            self.period = max(1, int(os.environ.get("MEMTRIAGE_LINES_FAULT_PERIOD", "64")))
        except ValueError:
            self.period = 64
        self.unavailable = None
        try:
            self.unavailable = self.open()
        except Exception as e:
            self.stop("%s: %s" % (type(e).__name__, e))

    def open(self):
        """Why the counter could not be set up, or None once it is."""
        import ctypes
        import fcntl
        import faulthandler
        import signal
        import struct

        if threading.current_thread() is not threading.main_thread():
            return "the process forked from a thread other than its main one"
        nr = self._NR.get(os.uname().machine)
        if nr is None:
            return "perf_event_open's number is not known on " + os.uname().machine
        signum = signal.SIGRTMAX - self.signal_below_max
        if signal.getsignal(signum) not in (signal.SIG_DFL, None):
            return "signal %d is the job's own" % signum
        attr = ctypes.create_string_buffer(128)
        # type=SOFTWARE, size, config=PAGE_FAULTS, sample_period; exclude_kernel and
        # exclude_hv (what an unprivileged user may count); a wakeup per overflow.
        # sample_type ADDR: each sample's record in the ring holds the faulting address.
        # Made disabled, and enabled once the signal is in place: a record without its
        # dump would pair every later stack with the page before its own.
        flags = 1 | (1 << 5) | (1 << 6)
        struct.pack_into("IIQQQQQI", attr, 0, 1, 128, 2, self.period, 1 << 3, 0, flags, 1)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        fd = libc.syscall(nr, attr, 0, -1, -1, ctypes.c_ulong(8))  # this thread; CLOEXEC
        if fd < 0:
            return "perf_event_open refused: %s (kernel.perf_event_paranoid is %s)" % (
                os.strerror(ctypes.get_errno()),
                _first_line("/proc/sys/kernel/perf_event_paranoid"),
            )
        self.fd = fd
        self.ioctl = libc.ioctl
        import mmap

        try:
            self.ring = mmap.mmap(fd, (1 + self._RING_PAGES) * _PAGE, mmap.MAP_SHARED,
                                  mmap.PROT_READ | mmap.PROT_WRITE)
        except (OSError, ValueError):
            self.ring = None  # stacks without their pages
        read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.pipe = (read_end, write_end)
        try:
            fcntl.fcntl(write_end, self._F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass  # the default 64 KiB: dumps past it are dropped, never blocking
        faulthandler.register(signum, file=write_end, all_threads=False, chain=False)
        self.signum = signum
        fcntl.fcntl(fd, self._F_SETSIG, signum)
        fcntl.fcntl(fd, self._F_SETOWN_EX, struct.pack("ii", 0, threading.get_native_id()))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
        libc.ioctl(fd, ctypes.c_ulong(self._IOC_ENABLE), 0)
        return None

    def read(self):
        """The samples since the last read: each the stack dumped (faulthandler's
        text, innermost frame first) and, where the ring told it (else None), the page that faulted and the
        faults the sample stands for (the period as the record was read). A dump cut
        by the read is kept for the next."""
        if self.pipe is None:
            return []
        chunks = [self.pending]
        while True:
            try:
                chunk = _read(self.pipe[0], 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        dumps = data.split(_HEADER)
        # The last dump may still be being written: wait for the next header, unless
        # nothing came since the last read.
        self.pending = b"" if len(chunks) == 1 else _HEADER + dumps[-1]
        complete = dumps[1:] if len(chunks) == 1 else dumps[1:-1]
        pages = self.read_ring(len(complete), held_back=bool(self.pending))
        return list(zip(complete, pages))

    def read_ring(self, wanted, held_back):
        """The pages of the `wanted` samples whose dumps were read, oldest first (the
        record of a dump `held_back` is kept for the next read); Nones where the ring
        and the dumps do not line up (a dump dropped, a record lost)."""
        import struct

        ring = self.ring
        if ring is None:
            return [None] * wanted
        head = struct.unpack_from("Q", ring, 1024)[0]
        tail = struct.unpack_from("Q", ring, 1032)[0]
        size = self._RING_PAGES * _PAGE
        pages, lost = self.backlog, False
        while tail + 8 <= head:
            kind, _misc, length = struct.unpack("IHH", self.ring_bytes(tail, 8, size))
            if length < 8:
                break
            if kind == 9 and length >= 16:  # PERF_RECORD_SAMPLE: the address
                addr = struct.unpack("Q", self.ring_bytes(tail + 8, 8, size))[0]
                pages.append((addr - addr % _PAGE, self.period))
            elif kind == 2:  # PERF_RECORD_LOST
                lost = True
            tail += length
        struct.pack_into("Q", ring, 1032, tail)
        # A dump still being written has its record already: kept for the next read.
        # Any other difference: a dump was dropped or a record lost, and from here
        # nothing lines up; the ring starts again empty.
        if lost or len(pages) != wanted + held_back:
            self.backlog = []
            return [None] * wanted
        self.backlog = pages[wanted:]
        return pages[:wanted]

    def ring_bytes(self, at, n, size):
        start = _PAGE + at % size
        end = start + n
        if end <= _PAGE + size:
            return self.ring[start:end]
        first = self.ring[start:_PAGE + size]
        return first + self.ring[_PAGE:_PAGE + n - len(first)]

    def slower(self):
        import ctypes

        if self.fd is None or self.period >= self._MAX_PERIOD:
            return False
        self.period *= 2
        self.ioctl(self.fd, ctypes.c_ulong(self._IOC_PERIOD), ctypes.byref(ctypes.c_uint64(self.period)))
        return True

    def stop(self, reason):
        """No more samples; lines are charged by where the threads are from here."""
        self.unavailable = reason
        self.close()

    def close(self):
        """No more signals: the counter disabled first (its ring's mapping would keep
        it counting past the close), then unmapped and closed. faulthandler keeps its
        handler: a signal still queued finds it, never the default action that would
        end the process."""
        if self.fd is None:
            return
        try:
            import ctypes

            self.ioctl(self.fd, ctypes.c_ulong(self._IOC_DISABLE), 0)
        except Exception:
            pass
        if self.ring is not None:
            try:
                self.ring.close()
            except Exception:
                pass
            self.ring = None
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.fd = None

    def release(self):
        """For a block: faulthandler's handler removed (the counter is closed, so no
        signal comes any more) and the pipe closed."""
        if self.signum is not None:
            try:
                import faulthandler

                faulthandler.unregister(self.signum)
            except Exception:
                pass
            self.signum = None
        self.close_pipe()

    def forget_parents(self):
        """In a forked child: the counter counts the parent's thread and the pipe is
        the parent's; their descriptors are closed here (the child opens its own),
        never the counter itself, which is still the parent's. The ring was not
        copied by the fork (the kernel maps it VM_DONTCOPY): its object is kept, never
        used, so that nothing unmaps what the child may later map at that address."""
        if self.ring is not None:
            _ORPHANED_RINGS.append(self.ring)
            self.ring = None
        if self.fd is not None:
            _close_quietly(self.fd)
            self.fd = None
        self.close_pipe()

    def close_pipe(self):
        if self.pipe is not None:
            for end in self.pipe:
                _close_quietly(end)
            self.pipe = None


def _note_point(series, t, value):
    """Adds `[t, value]` to a series where the value changed; past _SERIES_POINTS the
    resolution is halved, keeping the last point."""
    if series and series[-1][1] == value:
        return
    series.append([round(t, 3), value])
    if len(series) > _SERIES_POINTS:
        last = series[-1]
        del series[1::2]
        if series[-1] is not last:
            series.append(last)


def _close_quietly(fd):
    try:
        os.close(fd)
    except OSError:
        pass


_HEADER = b"Stack (most recent call first):\n"
_ORPHANED_RINGS = []


_FRAME = None


def _parse_dump(dump):
    """`  File "x.py", line 11 in __getitem__` lines into (file, line, function)."""
    return [
        (f.decode("utf-8", "replace"), int(n), fn.decode("utf-8", "replace"))
        for f, n, fn in _FRAME.findall(dump)
    ]


def _frames(frame):
    """A frame's stack as (file, line, function), innermost first."""
    out = []
    while frame is not None and len(out) < 256:
        code = frame.f_code
        out.append((code.co_filename, frame.f_lineno or 0, code.co_name))
        frame = frame.f_back
    return out


def _where(stack, inherited):
    """The innermost frame in the user's code (or the innermost at all), the user's
    frames that led to it, outermost first, and whether a module was being imported
    (importlib's frames inside it). In a forked child, the frames it inherited from
    the parent's fork (`inherited`) are not where it runs."""
    user = []
    importing = False
    for here in stack:
        if here in inherited:
            break
        if not user and here[0] == "<frozen importlib._bootstrap>":
            importing = True
        if not _is_library(here[0]):
            user.append(here)
            if len(user) >= _PATH_DEPTH:
                break
    if user:
        return user[0], tuple(reversed(user)), importing
    if stack:
        return stack[0], (stack[0],), importing
    return None, (), False


def _pinned_host():
    """torch's pinned host allocator (cudaHostAlloc), where CUDA is already in use:
    its pages count as shared memory (RssShmem), never /dev/shm. Never initialises
    CUDA."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None) if torch is not None else None
    try:
        if cuda is None or not cuda.is_initialized():
            return None
        stats = cuda.host_memory_stats()
        return {
            "current": int(stats.get("allocated_bytes.current", 0)),
            "peak": int(stats.get("allocated_bytes.peak", 0)),
        }
    except Exception:
        return None


def _pread(fd, size, offset):
    """os.pread without letting go of the GIL: a read of /proc takes microseconds,
    and each time this thread let go of the GIL and took it back, it could make the
    job's own thread wait for it."""
    got = _libc.pread(fd, _buffer, min(size, len(_buffer)), offset)
    if got < 0:
        raise OSError(_ctypes.get_errno(), os.strerror(_ctypes.get_errno()))
    return _ctypes.string_at(_buffer, got)


def _read(fd, size):
    """os.read, likewise (a non-blocking pipe's)."""
    got = _libc.read(fd, _buffer, min(size, len(_buffer)))
    if got < 0:
        raise OSError(_ctypes.get_errno(), os.strerror(_ctypes.get_errno()))
    return _ctypes.string_at(_buffer, got)


def _first_line(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return "unreadable"


def _library_dirs():
    """Where code that is not the user's lives: the standard library, site-packages,
    this hook."""
    import sysconfig

    dirs = set()
    paths = sysconfig.get_paths()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(name):
            dirs.add(os.path.realpath(paths[name]))
    for p in sys.path:
        if p and ("site-packages" in p or "dist-packages" in p):
            dirs.add(os.path.realpath(p))
    if os.path.isfile(__file__):
        dirs.add(os.path.dirname(os.path.realpath(__file__)))
    return tuple(sorted(d.rstrip("/") + "/" for d in dirs))


_LIBRARY = ()
_libc = None
_buffer = None
_resource = None
_json = None
_linecache = None
_ctypes = None
_sampler = None
_is_library_cache = {}
_MULTIPROCESSING_BOOTSTRAP = any(
    a.startswith("from multiprocessing") for a in getattr(sys, "orig_argv", ())
)


def _is_library(filename):
    if filename.startswith("<"):
        # <frozen importlib._bootstrap> is Python's own; <string> and <stdin> the
        # user's, except multiprocessing's own `-c` that starts a spawned child, its
        # resource tracker or forkserver (sys.argv is the parent's there).
        return filename.startswith(("<frozen", "<memtriage")) or (
            filename == "<string>" and _MULTIPROCESSING_BOOTSTRAP
        )
    hit = _is_library_cache.get(filename)
    if hit is None:
        try:
            hit = os.path.realpath(filename).startswith(_LIBRARY)
        except Exception:
            hit = False
        _is_library_cache[filename] = hit
    return hit


def _at_exit():
    s = _sampler
    if s is not None and s.pid == os.getpid() and s.failed is None and not s.done:
        s.done = True
        # Each step on its own: the figures are written even if the last
        # measurement fails.
        for step in (s.faults.close, s.tick, lambda: s.flush(final=True)):
            try:
                step()
            except Exception as e:
                s.failed = s.failed or "at exit: %s: %s" % (type(e).__name__, e)


def _exit_flushed(real_exit):
    """os._exit, which multiprocessing's children end with (atexit does not run
    then): the last figures are written first."""

    def _exit(code):
        _at_exit()
        real_exit(code)

    _exit.__doc__ = real_exit.__doc__
    return _exit


def _after_fork_in_child():
    global _sampler
    parent = os.getppid()
    if _sampler is not None:
        parent = _sampler.pid
        _sampler.faults.forget_parents()
        _sampler = None
    # The frames below the fork (the parent's, up to os.fork) are not the child's.
    try:
        inherited = frozenset(_frames(sys._getframe(1)))
        _begin("fork", parent, inherited)
    except Exception as e:  # said in the child's file, never the job's failure
        _failed_to_begin(parent, e)


def _failed_to_begin(parent, error):
    out_dir = os.environ.get("MEMTRIAGE_LINES_DIR")
    if not out_dir:
        return
    table = {
        "pid": os.getpid(), "ppid": parent, "started": "fork", "python": "%d.%d.%d" % sys.version_info[:3],
        "interval_ms": 0, "ticks": 0, "complete": False, "lines": [],
        "failed": "the measurement did not start: %s: %s" % (type(error).__name__, error),
    }
    try:
        path = os.path.join(out_dir, "%d.json" % os.getpid())
        with open(path + ".part", "w") as f:
            f.write(_json.dumps(table))
        os.replace(path + ".part", path)
    except Exception:
        pass


def _begin(started, parent, inherited=frozenset()):
    global _sampler
    out_dir = os.environ.get("MEMTRIAGE_LINES_DIR")
    if not out_dir:
        return
    try:
        epoch = float(os.environ.get("MEMTRIAGE_LINES_EPOCH", "nan"))
    except ValueError:
        epoch = float("nan")
    if epoch != epoch:
        epoch = time.monotonic()
    s = _Sampler(out_dir, epoch, started, parent, inherited)
    _sampler = s
    try:
        s.start()
    except Exception as e:  # no thread (a process or thread limit): said in its file
        s.failed = "the measuring thread did not start: %s: %s" % (type(e).__name__, e)
        s.flush()


def _prepare():
    """What the measuring thread uses, imported here, never by the thread: an import
    in progress at a fork is the child's to untangle."""
    global _LIBRARY, _resource, _json, _linecache, _FRAME, _libc, _buffer, _ctypes
    if _resource is not None:
        return
    import ctypes
    import json
    import linecache
    import re
    import resource

    # PyDLL: its calls keep the GIL.
    libc = ctypes.PyDLL(None, use_errno=True)
    for name, args in (("pread", (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long)),
                       ("read", (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t))):
        getattr(libc, name).argtypes = args
        getattr(libc, name).restype = ctypes.c_ssize_t
    _libc, _buffer, _ctypes = libc, ctypes.create_string_buffer(1 << 16), ctypes
    _FRAME = re.compile(rb'^  File "(.*)", line (\d+) in (.*)$', re.M)
    _resource, _json, _linecache = resource, json, linecache
    _LIBRARY = _library_dirs()


def measure_block():
    """A sampler for a block of this process's own code (`memtriage.track()`), on a
    signal of its own so that `memtriage run`'s hook, if any, goes on; `stop()` ends
    it and returns its figures."""
    _prepare()
    s = _Sampler(None, time.monotonic(), "exec", os.getppid(), signal_below_max=4)
    s.start()
    return s


def install():
    if not os.environ.get("MEMTRIAGE_LINES_DIR"):
        return
    import atexit

    _prepare()
    atexit.register(_at_exit)
    os._exit = _exit_flushed(os._exit)
    os.register_at_fork(after_in_child=_after_fork_in_child)
    _begin("exec", os.getppid())
