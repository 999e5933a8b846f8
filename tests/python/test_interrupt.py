# Ctrl-C interrupts a long build: the build runs on a worker thread without the GIL while the
# calling thread waits, checking for signals; KeyboardInterrupt is raised at once and the
# abandoned build finishes in the background.
import os
import signal
import threading
import time

import numpy as np
import pytest

import tessel as ts
from util import requires_llvm

pytestmark = requires_llvm


def slow_schedule(stages):
    A = ts.placeholder((64, 64), name="A")
    T = A
    for n in range(stages):
        T = ts.compute((64, 64), lambda i, j, T=T: ts.exp(T[i, j]) * 0.5 + ts.sin(T[i, j]), name=f"T{n}")
    s = ts.create_schedule(T)
    for st in s.stages[1:]:
        _, inner = st.split(st.leaf_iter_vars[1], factor=64)
        st.unroll(inner)  # 64 unrolled bodies per stage: seconds of LLVM -O3
    return s, [A, T]


@pytest.fixture
def python_sigint_handler():
    """Python's own SIGINT handler for the test: a process started in the background by a
    non-interactive shell inherits SIGINT ignored, and Python then installs no handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals")
def test_ctrl_c_interrupts_a_long_build(python_sigint_handler):
    s, args = slow_schedule(48)  # about 1 s per 8 stages on a CI core
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        ts.build(s, args)
    elapsed = time.perf_counter() - t0
    timer.join()
    assert elapsed < 2.5, f"the interrupt took {elapsed:.2f} s"
    # The extension still works afterwards.
    A = ts.placeholder((4,), name="A")
    B = ts.compute((4,), lambda i: A[i] + 1, name="B")
    b = np.zeros(4, "float32")
    ts.build(ts.create_schedule(B), [A, B])(np.ones(4, "float32"), b)
    assert b.tolist() == [2, 2, 2, 2]


def test_other_threads_run_while_building():
    s, args = slow_schedule(4)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.002)

    t = threading.Thread(target=ticker)
    t.start()
    t0 = time.perf_counter()
    ts.build(s, args)
    t1 = time.perf_counter()
    stop.set()
    t.join()
    assert len([x for x in ticks if t0 <= x <= t1]) >= 5
