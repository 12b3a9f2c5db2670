import mmap
import time

import pytest

import memtriage
from conftest import MIB

PAGE = mmap.PAGESIZE


def fresh_pages(n_bytes: int) -> mmap.mmap:
    """Anonymous memory not yet touched. No transparent huge pages: one fault per
    4 KiB page, so the count is exact."""
    m = mmap.mmap(-1, n_bytes)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        m.madvise(mmap.MADV_NOHUGEPAGE)
    return m


def touch(m: mmap.mmap) -> None:
    for off in range(0, len(m), PAGE):
        m[off] = 1


def test_faults_and_peak_of_a_block_that_touches_fresh_pages():
    size = 32 * MIB
    m = fresh_pages(size)
    with memtriage.track() as t:
        touch(m)
    pages = size // PAGE
    assert t.minor_faults >= pages
    # The loop itself faults little; an upper bound catches a wrong delta.
    assert t.minor_faults <= pages + 4096, t.minor_faults
    # Fresh anonymous pages never come from disk: the few major faults a busy machine
    # can add (the interpreter's own code paged back in) are not the block's 8192 pages.
    assert t.major_faults <= 16, t.major_faults
    assert t.peak_rss >= size
    assert t.peak_rss - t.start_rss >= size * 0.95
    assert t.peak_pss is not None and t.peak_pss >= size
    assert 0 < t.wall_seconds < 30
    m.close()


def test_peak_catches_memory_freed_before_the_block_ends():
    with memtriage.track() as t:
        m = fresh_pages(64 * MIB)
        touch(m)
        time.sleep(0.05)  # several samples while it is held
        m.close()
    assert t.end_rss < t.peak_rss
    assert t.peak_rss - t.start_rss >= 60 * MIB, (t.peak_rss - t.start_rss) / MIB
    assert t.rss_samples >= 10


def test_decorator_records_each_call_and_returns_its_value():
    tracker = memtriage.track("alloc", pss=False)

    @tracker
    def alloc(mib):
        m = fresh_pages(mib * MIB)
        touch(m)
        return len(m)

    assert tracker.minor_faults is None
    assert alloc(16) == 16 * MIB
    assert tracker.minor_faults >= 16 * MIB // PAGE
    assert tracker.peak_pss is None  # pss=False reads no smaps_rollup
    assert alloc.__name__ == "alloc"
    assert alloc(1) == MIB
    assert tracker.minor_faults < 16 * MIB // PAGE, "the second call's own figures"


def test_report_prints_a_summary(capsys):
    with memtriage.track("load") as t:
        touch(fresh_pages(8 * MIB))
    text = t.report()
    err = capsys.readouterr().err
    assert text in err
    assert "memtriage.track load:" in text and "minor faults" in text and "peak RSS" in text


def test_nested_blocks_each_get_their_figures():
    outer = memtriage.track()
    with outer:
        with memtriage.track() as inner:
            touch(fresh_pages(8 * MIB))
        touch(fresh_pages(8 * MIB))
    assert inner.minor_faults >= 2048
    assert outer.minor_faults >= 4096


def test_bad_interval_is_a_value_error():
    with pytest.raises(ValueError, match="interval"):
        memtriage.track(interval=0)
    with pytest.raises(ValueError, match="interval"):
        memtriage.track(interval=float("nan"))


def test_lines_name_the_line_that_kept_the_memory():
    # A leak is told by its rise over more than a second.
    kept = []
    with memtriage.track() as t:
        for _ in range(40):
            kept.append(bytearray(4 << 20))  # KEPT
            time.sleep(0.04)
    keeper = next(n for n, text in enumerate(open(__file__), 1) if "# KEPT" in text and "next(" not in text)
    assert t.lines_unavailable is None, t.lines_unavailable
    first = next(line for line in t.lines if line["kind"])
    assert first["line"] == keeper and first["file"] == __file__, t.lines[:3]
    assert first["kind"] == "leak", first
    assert 100 * MIB <= first["anon_kept"] <= 200 * MIB, first
    assert "most under test_track.py:" in t.summary(), t.summary()


def test_a_nested_block_says_why_it_has_no_lines():
    with memtriage.track() as outer:
        with memtriage.track() as inner:
            pass
    assert inner.lines is None and "around this one" in inner.lines_unavailable
    assert outer.lines is not None
    with memtriage.track(lines=False) as off:
        pass
    assert off.lines is None and off.lines_unavailable == "lines=False"


def test_a_block_ends_without_waiting_for_the_line_samplers_next_tick(monkeypatch):
    """The line sampler ticks every 5 s here: the block's end must not wait for it
    (it slept out its interval, so every block lasted at least one tick)."""
    monkeypatch.setenv("MEMTRIAGE_LINES_HZ", "0.2")
    began = time.perf_counter()
    with memtriage.track() as t:
        pass
    took = time.perf_counter() - began
    assert t.lines is not None, t.lines_unavailable
    assert took < 2.5, f"the block took {took:.2f} s: it waited for the sampler's tick"
