"""The spans-<pid>.jsonl writer: an in-memory list of finished lines, written
with os.write on an O_APPEND fd by a flusher thread every FLUSH_S and by
whoever asks (top-level scope exit, exit, signal)."""
import os
import threading

FLUSH_S = 0.05  # half the 100 ms the contract allows a SIGKILL to lose


class Recorder:
    def __init__(self, raw_dir, limit_bytes):
        self.dir = raw_dir
        self.limit = limit_bytes
        self._open()

    def _open(self):
        self.pid = os.getpid()
        self.path = os.path.join(self.dir, "spans-%d.jsonl" % self.pid)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o644)
        # The record path takes no lock: list.append is atomic, and flush()
        # takes lines off the front with len/slice/del, which appends (only
        # ever at the end) cannot disturb. Only flushes serialise.
        self.buf = []
        self.wlock = threading.RLock()  # reentrant: a signal handler may flush over a flush
        self.drop_lock = threading.Lock()
        self.used = 0  # bytes of begin+span lines accepted; racy on purpose: a bound, not a count
        self.recorded = 0  # span lines written, counted exactly at flush
        self.dropped = 0
        self.write_errors = 0
        self.closed = False
        self._size = os.fstat(self.fd).st_size  # bytes in the file, for _finish_job
        self._job = None  # the flush in progress: (lines, size before, size after, bytes, spans)
        self._gen = 0  # completed flushes
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
        if not self.closed:
            self.buf.append(line)

    def begin(self, line):
        """Returns whether the line was kept; a kept begin forces its span."""
        if self.closed or self.used + len(line) > self.limit:
            return False
        self.used += len(line)
        self.buf.append(line)
        return True

    def span(self, line, forced):
        if self.closed:
            return
        if not forced and self.used + len(line) > self.limit:
            with self.drop_lock:  # rare path, and the count must be exact
                self.dropped += 1
            return
        self.used += len(line)
        self.buf.append(line)

    def flush(self):
        """Write buffered lines; exact under SIGINT/SIGTERM handlers.

        A Python signal handler runs on the main thread between bytecodes,
        possibly in the middle of a flush there, and flushes too before it
        raises or exits. So a flush publishes its job in self._job before
        writing; a handler that finds one finishes it (the file size says how
        much landed), and the interrupted flush, if it ever resumes, sees
        that its job or generation is gone and stops. The steps after each
        check make no calls, so no handler can run between check and step.
        """
        with self.wlock:
            if self._job is not None:
                self._finish_job()
            gen = self._gen
            buf = self.buf
            n = len(buf)
            if not n:
                return
            chunk = buf[:n]
            spans = sum(1 for x in chunk if x.startswith('{"type":"span"'))
            data = "".join(chunk).encode()
            end = self._size + len(data)
            if self._gen != gen:
                return  # a handler flushed these lines while we were building data
            job = self._job = (n, self._size, end, data, spans)
            try:
                while data and self._job is job:
                    data = data[os.write(self.fd, data):]
            except OSError:  # a full disk must not take the workload down, nor go unreported
                self.write_errors += 1
                with self.drop_lock:
                    self.dropped += spans
                spans = 0
            if self._job is job:
                del buf[:n]
                self._size = end
                self.recorded += spans
                self._gen = gen + 1
                self._job = None

    def _finish_job(self):
        n, start, end, data, spans = self._job
        try:
            done = os.fstat(self.fd).st_size - start
            rest = data[max(done, 0):]
            while rest:
                rest = rest[os.write(self.fd, rest):]
        except OSError:
            self.write_errors += 1
        del self.buf[:n]
        self._size = end
        self.recorded += spans
        self._gen += 1
        self._job = None

    def close(self, last_line=None):
        if self.closed:
            return
        if last_line is not None:
            self.buf.append(last_line)
        self.flush()
        self.closed = True
        self._stop.set()

    def _flusher(self):
        while not self._stop.wait(FLUSH_S):
            if self.buf:
                self.flush()
