"""The spans-<pid>.jsonl writer: an in-memory list of finished lines, written
with os.write on an O_APPEND fd by a flusher thread every FLUSH_S and by
whoever asks (top-level scope exit, exit, signal)."""
import os
import signal
import threading

FLUSH_S = 0.05  # half the 100 ms the contract allows a SIGKILL to lose

_BLOCK = (signal.SIGINT, signal.SIGTERM)


class Recorder:
    def __init__(self, raw_dir, limit_bytes):
        self.dir = raw_dir
        self.limit = limit_bytes
        self._open()

    def _open(self):
        self.pid = os.getpid()
        self.path = os.path.join(self.dir, "spans-%d.jsonl" % self.pid)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o644)
        # Reentrant: a signal handler runs on the main thread and may
        # interrupt it while it holds either lock.
        self.lock = threading.RLock()
        self.wlock = threading.RLock()
        self.buf = []
        self.used = 0  # bytes of begin+span lines accepted so far
        self.recorded = 0
        self.dropped = 0
        self.write_errors = 0
        self.closed = False
        self._stop = threading.Event()
        t = threading.Thread(target=self._flusher, name="inferscope-flush", daemon=True)
        t.start()

    def after_fork_child(self):
        # The parent owns its file and its buffered lines; the child starts
        # its own file (new locks too: another thread may have held ours).
        try:
            os.close(self.fd)
        except OSError:
            pass
        self._open()

    def emit(self, line):
        """Control lines (process, clock, error, ...) are never budgeted."""
        with self.lock:
            if not self.closed:
                self.buf.append(line)

    def begin(self, line):
        """Returns whether the line was kept; a kept begin forces its span."""
        with self.lock:
            if self.closed or self.used + len(line) > self.limit:
                return False
            self.used += len(line)
            self.buf.append(line)
            return True

    def span(self, line, forced):
        with self.lock:
            if self.closed:
                return
            if not forced and self.used + len(line) > self.limit:
                self.dropped += 1
                return
            self.used += len(line)
            self.recorded += 1
            self.buf.append(line)

    def flush(self):
        # Signals are held off on the main thread so that a handler, which
        # flushes too, never runs between taking the buffer and writing it.
        old = _block()
        try:
            with self.wlock:
                with self.lock:
                    if not self.buf:
                        return
                    buf, self.buf = self.buf, []
                data = "".join(buf).encode()
                try:
                    while data:
                        data = data[os.write(self.fd, data):]
                except OSError:
                    # A full disk must not take the workload down with it.
                    self.write_errors += 1
        finally:
            if old is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def close(self, last_line=None):
        with self.lock:
            if self.closed:
                return
            if last_line is not None:
                self.buf.append(last_line)
        self.flush()
        with self.lock:
            self.closed = True
        self._stop.set()

    def _flusher(self):
        while not self._stop.wait(FLUSH_S):
            if self.buf:
                self.flush()


def _block():
    """Block SIGINT/SIGTERM on the main thread; returns the mask to restore."""
    if threading.get_ident() != threading.main_thread().ident or not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCK)
