"""Analysis workers: the engine runs here, never on the server's event loop.

``WorkerPool`` keeps a few worker *processes* (``python -c ... child_main()``): a pathological
file (5 MB, absurd nesting, a bug of ours that loops or crashes) costs one worker, which is
killed and replaced, never the server. Jobs are the functions of ``jobs.py``, sent pickled over
the worker's stdin/stdout with a length prefix.

Scheduling:

- Lanes, by priority: ``INTERACTIVE`` (hover, code actions) before ``DIAGNOSTICS`` (open
  documents) before ``BACKGROUND`` (workspace check, prefetch). With more than one worker,
  *heavy* jobs (a large text, ``HEAVY_CHARS``) and background jobs never occupy the last free
  worker: a 5 MB file being analysed never blocks diagnostics, hover or code actions on
  another document.
- Cancellation: a queued job that is cancelled never runs; a running one whose caller gave up
  (a stale analysis) is left to finish if it is young, and its worker killed and replaced if it
  has already run for ``kill_after`` seconds (foreground-first scheduling: stopped inside its
  worker, killed after ``CANCEL_GRACE``). A ``finish_when_stale`` job (an incremental analysis)
  is left to finish, and its document's next job waits for that worker.
- Timeout: a job running longer than its timeout kills its worker; the caller gets
  ``JobTimeout``. A crashed worker gives ``WorkerCrashed``; an exception inside a job
  ``JobFailed`` (with the worker's traceback).

Size: one worker is always there; more (up to ``size``) start when a job would otherwise wait
and stop after ``idle_retire`` seconds without work, so an idle server holds one; a worker idle
for ``TRIM_AFTER`` seconds drops its caches and gives the memory back.

``mode="thread"`` runs the same jobs in threads (no kill; used when processes cannot be
started, and by ``--workers 0``).
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

# JobCancelled is raised in a job thread; cancellation_in recognises it through library wrapping
from gradwarden.lsp.cancel import JobCancelled, cancellation_in

log = logging.getLogger("gradwarden.lsp.worker")

INTERACTIVE = 0
DIAGNOSTICS = 1
BACKGROUND = 2

_HEADER = struct.Struct(">Q")
HEAVY_CHARS = 256_000  # jobs on texts larger than this are "heavy" (see the lanes above)
DEFAULT_TIMEOUT = 60.0
DEFAULT_KILL_AFTER = 0.5
CANCEL_GRACE = 1.0  # seconds a cancelled job may take to stop before its worker is killed
MAX_RESPAWNS = 8  # within RESPAWN_WINDOW seconds, then back off
RESPAWN_WINDOW = 30.0
IDLE_RETIRE = 60.0  # seconds an extra worker may stay idle
HOME_PATIENCE = 0.3  # seconds an edit's analysis waits for its document's worker to stop background work
SPAWN_AFTER = 0.15  # seconds a job waits for a busy worker before another worker is started
TRIM_AFTER = 30.0  # seconds idle before a worker drops its caches (recordings, parsed documents)


class WorkerError(Exception):
    """A job did not produce a result."""


class WorkerCrashed(WorkerError):
    pass


class JobTimeout(WorkerError):
    pass


class JobStopped(WorkerError):
    """The job was cancelled inside its worker (the worker lives on)."""


class JobFailed(WorkerError):
    """The job raised in the worker; ``str()`` is the worker's exception, ``details`` its traceback."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


# --------------------------------------------------------------------------- framing
def write_frame(stream: BinaryIO, obj: Any) -> None:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def read_frame(stream: BinaryIO) -> Any:
    """The next object, or raise EOFError."""
    head = _read_exactly(stream, _HEADER.size)
    (size,) = _HEADER.unpack(head)
    return pickle.loads(_read_exactly(stream, size))


def _read_exactly(stream: BinaryIO, n: int) -> bytes:
    chunks: List[bytes] = []
    while n > 0:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


# --------------------------------------------------------------------------- child side
CANCEL = "__cancel__"  # a frame (CANCEL, job id): stop that job if it is still running
CANCELLED = "cancelled"  # the ``ok`` field of the reply to a job stopped by a cancel frame


def _raise_in_thread(thread: threading.Thread) -> bool:
    """Make ``thread`` raise JobCancelled at its next bytecode (cooperative cancellation of
    pure-Python work, without killing the process)."""
    import ctypes

    ident = thread.ident
    if ident is None:
        return False
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(JobCancelled))
    return done == 1


def child_main() -> None:
    """The worker process. The main thread reads frames: a job is queued for the runner, a
    cancel frame stops the running job (an exception raised in its thread, so that the worker
    survives and keeps its caches); the runner thread runs jobs one at a time, each in a fresh
    thread with a large stack, and writes (id, ok, payload) replies. Exits at EOF."""
    import queue

    from gradwarden.lsp.jobs import JOBS, forbid_torch, warm_up

    forbid_torch()
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed by accident goes to stderr, not into the protocol
    inp = sys.stdin.buffer
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 8000))
    threading.stack_size(256 * 1024 * 1024)  # deep but legal nesting must not overflow the C stack
    try:
        warm_up()
    except Exception:  # noqa: BLE001 - a broken engine still answers (with errors)
        log.exception("worker warm-up failed")

    trim = _malloc_trim()
    pending: "queue.Queue[Optional[Tuple[int, str, Tuple[Any, ...]]]]" = queue.Queue()
    lock = threading.Lock()
    current: Dict[str, Any] = {"id": None, "thread": None, "cancelled": False}
    # Cancel frames that arrived before their job started (the server writes frames from
    # several threads, so a cancel may overtake its job): those jobs are answered at once.
    early: set = set()

    def run_one(box: List[Tuple[int, Any, Any]], job_id: int, name: str, args: Tuple[Any, ...],
                background: bool = False) -> None:
        if background:
            _lower_priority()
        try:
            try:
                box.append((job_id, True, JOBS[name](*args)))
            except JobCancelled:
                box.append((job_id, CANCELLED, None))
            except BaseException as exc:  # noqa: BLE001 - reported to the server, never fatal here
                if cancellation_in(exc):
                    box.append((job_id, CANCELLED, None))
                    return
                import traceback

                box.append((job_id, False, (f"{type(exc).__name__}: {exc}", traceback.format_exc())))
        except JobCancelled:
            pass  # arrived after the job's own code ended: what it produced stands

    def runner() -> None:
        last_trim = time.monotonic()
        while True:
            item = pending.get()
            if item is None:
                return
            job_id, name, args = item[:3]
            background = len(item) > 3 and bool(item[3])
            box: List[Tuple[int, Any, Any]] = []
            thread = threading.Thread(target=run_one, args=(box, job_id, name, args, background), daemon=True)
            with lock:
                skip = job_id in early
                early.discard(job_id)
                current.update(id=job_id, thread=thread, cancelled=skip)
                if not skip:
                    thread.start()
            if not skip:
                thread.join()
            with lock:
                cancelled = current["cancelled"]
                current.update(id=None, thread=None, cancelled=False)
            if box:
                reply = box[0]
            elif cancelled:
                reply = (job_id, CANCELLED, None)
            else:
                reply = (job_id, False, ("worker thread died", ""))
            try:
                write_frame(out, reply)
            except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
                write_frame(out, (job_id, False, (f"unpicklable result: {type(exc).__name__}: {exc}", "")))
            except (BrokenPipeError, OSError):
                os._exit(0)
            del box, thread, args, item
            if trim is not None and (name in ("hover_table", "fix_edits_many", "trim") or time.monotonic() - last_trim > 5.0):
                trim(0)  # give freed memory back to the OS (analyses allocate and free a lot)
                last_trim = time.monotonic()

    worker = threading.Thread(target=runner, name="gw-runner", daemon=True)
    worker.start()
    while True:
        try:
            frame = read_frame(inp)
        except EOFError:
            pending.put(None)
            worker.join()
            return
        if frame[0] == CANCEL:
            with lock:
                thread = current["thread"]
                if current["id"] == frame[1] and thread is not None:
                    if not current["cancelled"]:
                        current["cancelled"] = _raise_in_thread(thread)
                elif len(early) < 1000:
                    early.add(frame[1])
            continue
        pending.put(frame)


BACKGROUND_NICE = 10  # niceness of a background job's thread (its own thread: the next job's is new)


def _lower_priority() -> None:
    """Background work (the prefetch: the fixer's parse, the hover recording) runs in another
    worker process beside an edit's analysis; on a machine with few cores they shared a core
    evenly, and the edit's analysis took several times its CPU time. On Linux a thread is a
    task with its own niceness: this lowers this thread's only (the job runs in a fresh one)."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(os.getpriority(os.PRIO_PROCESS, tid) + BACKGROUND_NICE, 19))
    except OSError:
        pass


def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


# --------------------------------------------------------------------------- parent side
@dataclass(eq=False)
class _Job:
    id: int
    name: str
    args: Tuple[Any, ...]
    lane: int
    timeout: float
    kill_after: Optional[float]
    future: "asyncio.Future[Any]"
    seq: int = 0
    started: float = 0.0
    proc: Optional["_Proc"] = None
    timer: Optional[asyncio.TimerHandle] = None
    cancelled: bool = False
    affinity: Optional[str] = None
    heavy: bool = False
    may_spawn: bool = True
    queued_at: float = field(default_factory=time.monotonic)
    cancel_sent: bool = False  # a cancel frame went to the worker; the reply says how it ended
    cancel_at: float = 0.0
    preempted: bool = False  # stopped to free its worker for a foreground job; runs again later
    # Once stale, left to finish (its result dropped) rather than stopped: the incremental
    # analysis of an edit costs tens of milliseconds and leaves its worker's caches ready for the
    # next one, which waits for that worker instead of starting cold on another (or on one
    # started after a kill). Its timeout still applies.
    finish_when_stale: bool = False

    @property
    def limited(self) -> bool:
        """Kept off the last free worker."""
        return self.heavy or self.lane == BACKGROUND


class _Proc:
    """One worker process and the thread that reads its replies."""

    def __init__(self, pool: "WorkerPool", index: int) -> None:
        self.pool = pool
        self.index = index
        self.job: Optional[_Job] = None
        self.affinities: List[str] = []  # keys whose caches (recordings) this worker holds
        self.idle_since = time.monotonic()
        self.trimmed = True  # nothing cached yet
        self.dead = False
        self.killed_for: Optional[str] = None
        self.popen = subprocess.Popen(
            pool.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env=pool.env,
            cwd=pool.cwd,
            close_fds=True,
        )
        self.pid = self.popen.pid
        self._write_lock = threading.Lock()
        self.reader = threading.Thread(target=self._read_loop, name=f"gw-worker-{index}-reader", daemon=True)
        self.reader.start()

    def _read_loop(self) -> None:
        stream = self.popen.stdout
        assert stream is not None
        loop = self.pool.loop
        while True:
            try:
                msg = read_frame(stream)
            except (EOFError, OSError, ValueError):
                break
            except Exception:  # noqa: BLE001 - an unreadable reply: treat the worker as broken
                log.exception("worker %s sent an unreadable reply", self.pid)
                break
            try:
                loop.call_soon_threadsafe(self.pool._on_reply, self, msg)
            except RuntimeError:  # loop closed
                return
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        try:
            loop.call_soon_threadsafe(self.pool._on_exit, self)
        except RuntimeError:
            pass

    def send(self, job: _Job) -> None:
        """Runs in an executor thread (a large text must not block the event loop)."""
        stdin = self.popen.stdin
        assert stdin is not None
        with self._write_lock:
            write_frame(stdin, (job.id, job.name, job.args, job.lane == BACKGROUND))

    def send_cancel(self, job_id: int) -> None:
        """Runs in an executor thread, like ``send``."""
        stdin = self.popen.stdin
        assert stdin is not None
        with self._write_lock:
            write_frame(stdin, (CANCEL, job_id))

    def kill(self, why: str) -> None:
        if self.dead:
            return
        self.killed_for = why
        try:
            self.popen.kill()
        except OSError:
            pass

    def close(self) -> None:
        try:
            if self.popen.stdin:
                self.popen.stdin.close()
        except OSError:
            pass


LEGACY_ENV = "GRADWARDEN_LSP_SCHEDULING"


def foreground_first_from_env() -> bool:
    """``GRADWARDEN_LSP_SCHEDULING=legacy`` runs the server with the scheduling of before
    (stale jobs killed, background work not preempted, prefetch in the interactive lane): the
    baseline of ``benchmarks/bench_lsp.py``."""
    return os.environ.get(LEGACY_ENV, "").strip().lower() != "legacy"


def worker_command(python: Optional[str] = None) -> List[str]:
    # -c (not -m): the editor's working directory (the user's project) is removed from sys.path
    # before anything is imported, so no file of the user's can shadow ours or get imported.
    code = (
        "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
        "from gradwarden.lsp.worker import child_main; child_main()"
    )
    return [python or sys.executable, "-c", code]


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[2])


class WorkerPool:
    """See the module docstring. Create and use it on one event loop."""

    def __init__(
        self,
        size: int = 2,
        *,
        mode: str = "process",
        timeout: float = DEFAULT_TIMEOUT,
        kill_after: float = DEFAULT_KILL_AFTER,
        python: Optional[str] = None,
        min_size: int = 1,
        idle_retire: float = IDLE_RETIRE,
        foreground_first: bool = True,
    ) -> None:
        # foreground_first=False: the scheduling before cooperative cancellation (stale jobs
        # killed with their worker, background work never preempted); kept as the baseline
        # that benchmarks/bench_lsp.py measures against.
        self.foreground_first = foreground_first
        self.size = max(1, int(size))
        self.min_size = max(1, min(int(min_size), self.size))
        self.idle_retire = idle_retire
        self._retire_timer: Optional[asyncio.TimerHandle] = None
        self._spawn_timer: Optional[asyncio.TimerHandle] = None
        self._home_timer: Optional[asyncio.TimerHandle] = None
        self.mode = mode
        self.timeout = timeout
        self.kill_after = kill_after
        self.command = worker_command(python)
        env = dict(os.environ)
        root = _package_root()
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.env = env
        self.cwd = root
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self.procs: List[_Proc] = []
        self.queue: List[_Job] = []
        self._ids = itertools.count(1)
        self._seq = itertools.count()
        self._spawns: List[float] = []
        self._closed = False
        self._threads: Optional[ThreadPoolExecutor] = None
        self._io = ThreadPoolExecutor(max_workers=max(2, self.size), thread_name_prefix="gw-worker-io")
        self.crashes = 0
        self.timeouts = 0
        self.kills = 0
        self.completed = 0
        self.cancelled = 0  # running jobs stopped inside their worker (no kill)
        self.preemptions = 0  # background jobs stopped for a foreground one (then re-run)
        self.home_waits = 0  # of which: an edit's analysis waited for its document's worker
        self.retired = 0
        self.started: Dict[str, int] = {}  # job name -> jobs asked for (tests count them)
        self._watchers: List["asyncio.Future[None]"] = []

    # ---- observing (tests and benchmarks wait for states, never for durations)
    def _changed(self) -> None:
        watchers, self._watchers = self._watchers, []
        for fut in watchers:
            if not fut.done():
                fut.set_result(None)

    async def wait_until(self, predicate, guard: float = 300.0) -> None:
        """Return once ``predicate()`` holds; it is re-checked whenever the pool's state changes
        (a job dispatched, answered or cancelled, a worker started, killed, retired or gone).
        ``guard`` only stops a wait that would otherwise hang (raises TimeoutError)."""
        async def wait() -> None:
            while not predicate():
                fut = self.loop.create_future()
                self._watchers.append(fut)
                await fut

        await asyncio.wait_for(wait(), guard)

    def running(self, name: str) -> int:
        """How many workers are running job ``name`` now."""
        return sum(1 for p in self.procs if not p.dead and p.job is not None and p.job.name == name)

    # ---- lifecycle
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def start(self) -> None:
        """Start the workers now (otherwise on first use). Falls back to threads when a process
        cannot be started."""
        self.loop  # bind to the running loop
        if self.mode == "process":
            try:
                while len(self.procs) < self.min_size:
                    self._spawn()
            except OSError as exc:
                log.error("cannot start analysis worker processes (%s); analysing in threads instead", exc)
                self._fall_back_to_threads()

    def _fall_back_to_threads(self) -> None:
        self.mode = "thread"
        for proc in self.procs:
            proc.kill("fallback")
        self.procs = []

    def _spawn(self) -> _Proc:
        now = time.monotonic()
        self._spawns = [t for t in self._spawns if now - t < RESPAWN_WINDOW] + [now]
        proc = _Proc(self, len(self._spawns))
        self.procs.append(proc)
        log.debug("started analysis worker %s", proc.pid)
        return proc

    def pids(self) -> List[int]:
        return [p.pid for p in self.procs if not p.dead]

    def alive(self) -> int:
        return len([p for p in self.procs if not p.dead])

    async def close(self) -> None:
        self._closed = True
        for timer in (self._retire_timer, self._spawn_timer):
            if timer is not None:
                timer.cancel()
        for job in self.queue:
            if not job.future.done():
                job.future.cancel()
        self.queue = []
        for proc in list(self.procs):
            proc.close()
        deadline = time.monotonic() + 2.0
        for proc in list(self.procs):
            remaining = max(0.0, deadline - time.monotonic())
            try:
                await self.loop.run_in_executor(None, proc.popen.wait, remaining)
            except (subprocess.TimeoutExpired, RuntimeError):
                proc.kill("shutdown")
        self.procs = []
        if self._threads:
            self._threads.shutdown(wait=False, cancel_futures=True)
        self._io.shutdown(wait=False)

    def close_now(self) -> None:
        """Synchronous last resort (process exit): kill every worker."""
        self._closed = True
        for proc in list(self.procs):
            proc.kill("shutdown")

    # ---- running jobs
    async def run(
        self,
        name: str,
        *args: Any,
        lane: int = INTERACTIVE,
        timeout: Optional[float] = None,
        kill_after: Optional[float] = -1.0,
        affinity: Optional[str] = None,
        may_spawn: bool = True,
        finish_when_stale: bool = False,
    ) -> Any:
        """Run job ``name`` with ``args`` and return its result (raises WorkerError).

        ``kill_after``: when the caller is cancelled while the job runs, kill the worker if the
        job has run at least this long (None: never; -1: the pool's default). ``affinity``: a key
        (a document) whose jobs should go to the same worker when it is free (its caches).
        ``may_spawn=False``: the job waits for a running worker rather than start another one
        (bulk work such as the diagnostics of documents just opened: a second worker process
        costs some 60 MB, worth it for the document being edited, not for a batch), unless
        the busy worker is on a heavy text. ``finish_when_stale``: see ``_Job``."""
        if self._closed:
            raise WorkerError("the analysis workers are shut down")
        self.started[name] = self.started.get(name, 0) + 1
        timeout = self.timeout if timeout is None else timeout
        if self.mode == "thread":
            return await self._run_in_thread(name, args, timeout)
        if not self.procs:
            self.start()
            if self.mode == "thread":
                return await self._run_in_thread(name, args, timeout)
        job = _Job(
            id=next(self._ids),
            name=name,
            args=args,
            lane=lane,
            timeout=timeout,
            kill_after=self.kill_after if kill_after is not None and kill_after < 0 else kill_after,
            future=self.loop.create_future(),
            seq=next(self._seq),
            affinity=affinity,
            heavy=any(isinstance(a, (str, bytes)) and len(a) > HEAVY_CHARS for a in args),
            may_spawn=may_spawn,
            finish_when_stale=finish_when_stale and affinity is not None,
        )
        self.queue.append(job)
        self._pump()
        try:
            return await job.future
        except asyncio.CancelledError:
            self._cancel(job)
            raise

    async def _run_in_thread(self, name: str, args: Tuple[Any, ...], timeout: float) -> Any:
        from gradwarden.lsp.jobs import JOBS

        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="gw-analysis")
        fut = self.loop.run_in_executor(self._threads, _call_job, JOBS[name], args)
        try:
            ok, payload = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            self.timeouts += 1
            raise JobTimeout(f"{name} took more than {timeout:g}s") from None
        if not ok:
            raise JobFailed(*payload)
        self.completed += 1
        return payload

    def _cancel(self, job: _Job) -> None:
        """The caller gave up: drop a queued job; a running one is killed (with its worker)
        once it has run ``kill_after`` seconds, else left to finish and its result dropped."""
        job.cancelled = True
        if job.proc is None:
            if job in self.queue:
                self.queue.remove(job)
            self._changed()
            return
        if job.finish_when_stale:
            return
        if self.foreground_first and self.mode == "process":
            if not job.cancel_sent:
                self._send_cancel(job)
            if job.kill_after is not None and job.lane != BACKGROUND:
                # the fallback for a job that cannot be interrupted (stuck in native code).
                # Not for background work: it runs away from the documents' homes, so no edit
                # waits for its worker; stuck in the fixer's native parse, it stops when the
                # parse returns (its timeout still applies), and a kill would cost a new
                # worker's start-up on a machine whose cores the edits need.
                self.loop.call_later(max(job.kill_after, CANCEL_GRACE), self._kill_stale, job)
            return
        if job.kill_after is None:
            return
        ran = time.monotonic() - job.started
        if ran >= job.kill_after:
            self._kill_stale(job)
        else:
            self.loop.call_later(job.kill_after - ran, self._kill_stale, job)

    def _send_cancel(self, job: _Job) -> None:
        proc = job.proc
        if proc is None or proc.dead:
            return
        job.cancel_sent = True
        job.cancel_at = time.monotonic()
        fut = self.loop.run_in_executor(self._io, proc.send_cancel, job.id)
        fut.add_done_callback(lambda f: self._sent(proc, job, f))

    def _preempt_for(self, job: _Job) -> bool:
        """Free a worker for foreground ``job`` by stopping a background job (which is queued
        again). True when a worker will be free shortly (a preemption is under way)."""
        running = [p for p in self.procs if not p.dead and p.job is not None]
        stopping = [p.job for p in running if p.job.preempted]  # type: ignore[union-attr]
        if stopping:
            # A job stuck in native code may not stop soon: after the grace, the foreground
            # job may start a worker of its own (the usual rule below) instead of waiting.
            waited = time.monotonic() - min(j.cancel_at for j in stopping)  # type: ignore[union-attr]
            if waited < CANCEL_GRACE:
                if self._spawn_timer is None:
                    self._spawn_timer = self.loop.call_later(CANCEL_GRACE - waited + 0.005, self._spawn_due)
                return True
            return False
        victim = next((p for p in running if p.job.lane == BACKGROUND and not p.job.cancel_sent  # type: ignore[union-attr]
                       and p.job.name != "trim"), None)  # type: ignore[union-attr]
        if victim is None:
            return False
        victim.job.preempted = True  # type: ignore[union-attr]
        self.preemptions += 1
        log.debug("preempting background %s for %s", victim.job.name, job.name)  # type: ignore[union-attr]
        self._send_cancel(victim.job)  # type: ignore[arg-type]
        return True

    def _waits_for_home(self, job: _Job) -> bool:
        """An edit's incremental analysis whose document's worker (its caches) is busy with
        background work (the prefetch, the hover recording) waits for that worker, which is
        told to stop, instead of running on another: there, the first analysis of the document
        records every statement, several times the cost of the edit's own (the seconds-long
        edits of the benchmark's trace). Not past ``HOME_PATIENCE`` seconds of stopping (work
        stuck in native code), and never for another document's foreground job."""
        if not (job.finish_when_stale and self.foreground_first and self.mode == "process"):
            return False
        home = next((p for p in self.procs if not p.dead and job.affinity in p.affinities), None)
        busy = home.job if home is not None else None
        if busy is None or busy.lane != BACKGROUND or busy.name == "trim":
            return False
        if not busy.cancel_sent:
            busy.preempted = True
            self.preemptions += 1
            self.home_waits += 1
            log.debug("stopping background %s: %s's worker is wanted for its edit", busy.name, job.affinity)
            self._send_cancel(busy)
        left = HOME_PATIENCE - (time.monotonic() - (busy.cancel_at or time.monotonic()))
        if left <= 0:
            return False
        if self._home_timer is None:
            self._home_timer = self.loop.call_later(left + 0.005, self._home_due)
        return True

    def _keeps_home_free(self, job: _Job, idle: List[_Proc]) -> bool:
        """Background work for a document (the fixer's edits, the hover recording) runs on
        another worker than the document's home, started for it if need be (up to the pool's
        size): the fixer's parse runs in native code that a stop request cannot interrupt, and
        a home busy with it made the next edit wait, or go cold on another worker while the
        home was killed for not stopping (each the seconds-long edits of the benchmark)."""
        if job.lane != BACKGROUND or job.affinity is None or not self.foreground_first or self.mode != "process":
            return False
        if any(job.affinity not in p.affinities for p in idle):
            return True
        return self.alive() < self.size and any(job.affinity in p.affinities for p in idle)

    def _home_due(self) -> None:
        self._home_timer = None
        self._pump()

    def _kill_stale(self, job: _Job) -> None:
        proc = job.proc
        if proc is None or proc.job is not job or proc.dead:
            return
        self.kills += 1
        log.info("killing worker %s: stale %s job has run %.2fs", proc.pid, job.name, time.monotonic() - job.started)
        proc.kill("stale")
        self._changed()

    def _limit_background(self) -> int:
        return self.size - 1 if self.size > 1 else 1

    def _pump(self) -> None:
        if self._closed:
            return
        self.queue = [j for j in self.queue if not j.cancelled and not j.future.done()]
        for p in list(self.procs):
            if not p.dead and p.job is None and p.popen.poll() is not None:
                p.dead = True  # exited; its reader thread reports it (and it is replaced) shortly
        while self.queue:
            idle = [p for p in self.procs if p.job is None and not p.dead]
            busy_limited = sum(1 for p in self.procs if p.job is not None and p.job.limited)
            # a job whose document's worker is finishing that document's stale job waits for it
            finishing = {p.job.affinity for p in self.procs
                         if not p.dead and p.job is not None and p.job.finish_when_stale and p.job.cancelled}
            runnable = [j for j in sorted(self.queue, key=lambda j: (j.lane, j.seq))
                        if (not j.limited or busy_limited < self._limit_background())
                        and not (j.affinity in finishing and j.finish_when_stale)
                        and not self._waits_for_home(j)]
            if not runnable:
                break
            pick = runnable[0]
            if not idle and self.foreground_first and self.mode == "process":
                foreground = next((j for j in runnable if j.lane < BACKGROUND), None)
                if foreground is not None and self._preempt_for(foreground):
                    break
            if not idle:
                # Every worker is busy and a job could run: start another one (up to size) if
                # the job has already waited a moment (most jobs take tens of milliseconds).
                # Only a job that may start a worker does (see ``run``), and it gets that worker.
                # ... or any job, when a worker is busy with a heavy text (a 5 MB file must not
                # hold up the documents opened beside it)
                behind_heavy = any(p.job is not None and p.job.heavy for p in self.procs if not p.dead)
                pick = next((j for j in runnable if j.may_spawn or behind_heavy), None)
                if pick is None or self.mode != "process" or self.alive() >= self.size:
                    break
                waited = time.monotonic() - pick.queued_at
                if waited < SPAWN_AFTER:
                    if self._spawn_timer is None:
                        self._spawn_timer = self.loop.call_later(SPAWN_AFTER - waited + 0.005, self._spawn_due)
                    break
                try:
                    idle = [self._spawn()]
                except OSError as exc:
                    log.warning("cannot start another analysis worker: %s", exc)
                    break
            if self._keeps_home_free(pick, idle):
                away = [p for p in idle if pick.affinity not in p.affinities]
                if not away:
                    try:
                        away = [self._spawn()]
                    except OSError as exc:
                        log.warning("cannot start another analysis worker: %s", exc)
                idle = away or idle
            self.queue.remove(pick)
            proc = idle[0]
            if pick.affinity is not None:
                proc = next((p for p in idle if pick.affinity in p.affinities), proc)
                if pick.affinity in proc.affinities:
                    proc.affinities.remove(pick.affinity)
                    proc.affinities.append(pick.affinity)
                elif pick.finish_when_stale or not any(pick.affinity in p.affinities for p in self.procs
                                                       if not p.dead):
                    # a document has one home: where its incremental analysis ran last (the
                    # caches that make an edit cheap); background work run elsewhere (its home
                    # being busy) does not move it
                    for p in self.procs:
                        if pick.affinity in p.affinities:
                            p.affinities.remove(pick.affinity)
                    proc.affinities.append(pick.affinity)
                del proc.affinities[:-4]
            self._dispatch(proc, pick)
        self._schedule_retire()
        self._changed()

    def _spawn_due(self) -> None:
        self._spawn_timer = None
        self._pump()

    def _schedule_retire(self) -> None:
        if self._retire_timer is not None or self._closed or self.mode != "process":
            return
        if self.alive() > self.min_size or any(not p.trimmed for p in self.procs if not p.dead):
            self._retire_timer = self.loop.call_later(min(self.idle_retire, TRIM_AFTER, 15.0), self._retire_idle)

    def _retire_idle(self) -> None:
        """Stop the extra workers that have had nothing to do for ``idle_retire`` seconds, and
        let the ones idle for ``TRIM_AFTER`` seconds drop their caches."""
        self._retire_timer = None
        now = time.monotonic()
        for proc in self.procs:
            if not proc.dead and proc.job is None and not proc.trimmed and now - proc.idle_since >= TRIM_AFTER:
                proc.trimmed = True
                job = _Job(id=next(self._ids), name="trim", args=(), lane=BACKGROUND, timeout=self.timeout,
                           kill_after=None, future=self.loop.create_future(), seq=next(self._seq))
                job.future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)
                self._dispatch(proc, job)
        alive = [p for p in self.procs if not p.dead]
        for proc in alive[self.min_size:]:
            if len([p for p in self.procs if not p.dead]) <= self.min_size:
                break
            if proc.job is None and now - proc.idle_since >= self.idle_retire:
                log.debug("retiring idle analysis worker %s", proc.pid)
                proc.killed_for = "retired"
                proc.dead = True
                self.retired += 1
                proc.close()
        self._schedule_retire()
        self._changed()

    def _dispatch(self, proc: _Proc, job: _Job) -> None:
        proc.job = job
        job.proc = proc
        job.started = time.monotonic()
        job.timer = self.loop.call_later(job.timeout, self._on_timeout, job)
        fut = self.loop.run_in_executor(self._io, proc.send, job)
        fut.add_done_callback(lambda f: self._sent(proc, job, f))

    def _sent(self, proc: _Proc, job: _Job, fut: "asyncio.Future[None]") -> None:
        exc = fut.exception() if not fut.cancelled() else None
        if exc is not None:
            log.warning("could not send a job to worker %s: %s", proc.pid, exc)
            proc.kill("broken pipe")  # the reader thread reports the exit

    def _on_timeout(self, job: _Job) -> None:
        proc = job.proc
        if proc is None or proc.job is not job:
            return
        self.timeouts += 1
        log.warning("analysis job %s timed out after %.1fs; restarting worker %s", job.name, job.timeout, proc.pid)
        if not job.future.done():
            job.future.set_exception(JobTimeout(f"{job.name} took more than {job.timeout:g}s"))
        proc.kill("timeout")

    def _on_reply(self, proc: _Proc, msg: Tuple[int, bool, Any]) -> None:
        job_id, ok, payload = msg
        job = proc.job
        if job is None or job.id != job_id:
            log.debug("reply to a job that is gone (%s)", job_id)
            return
        proc.job = None
        if job.name != "trim":
            proc.idle_since = time.monotonic()
            proc.trimmed = False
        if job.timer:
            job.timer.cancel()
        if ok == CANCELLED:
            self.cancelled += 1
            if job.preempted and not job.cancelled and not job.future.done():
                job.proc, job.preempted, job.cancel_sent = None, False, False
                self.queue.append(job)  # its old place among the background jobs
            elif not job.future.done():
                job.future.set_exception(JobStopped(f"{job.name} was cancelled"))
            self._pump()
            self._changed()
            return
        self.completed += 1
        if not job.future.done():
            if ok:
                job.future.set_result(payload)
            else:
                message, details = payload if isinstance(payload, tuple) else (str(payload), "")
                job.future.set_exception(JobFailed(message, details))
        self._pump()
        self._changed()

    def _on_exit(self, proc: _Proc) -> None:
        proc.dead = True
        if proc in self.procs:
            self.procs.remove(proc)
        job = proc.job
        proc.job = None
        if job is not None:
            if job.timer:
                job.timer.cancel()
            if not job.future.done():
                self.crashes += 1
                code = proc.popen.returncode
                log.error("analysis worker %s died (exit status %s) while running %s", proc.pid, code, job.name)
                job.future.set_exception(WorkerCrashed(f"the analysis worker died (exit status {code})"))
        elif proc.killed_for is None and not self._closed:
            self.crashes += 1
            log.error("analysis worker %s exited unexpectedly (status %s)", proc.pid, proc.popen.returncode)
        if self._closed:
            return
        self._replace()
        self._changed()

    def _replace(self) -> None:
        now = time.monotonic()
        recent = [t for t in self._spawns if now - t < RESPAWN_WINDOW]
        if len(recent) >= MAX_RESPAWNS + self.size:
            delay = RESPAWN_WINDOW - (now - recent[0])
            log.error("analysis workers keep dying; next restart in %.0fs", delay)
            self.loop.call_later(max(delay, 1.0), self._replace)
            return
        try:
            while len([p for p in self.procs if not p.dead]) < self.min_size:
                self._spawn()
        except OSError as exc:
            log.error("cannot restart an analysis worker (%s); analysing in threads instead", exc)
            self._fall_back_to_threads()
            for job in self.queue:
                self.loop.create_task(self._requeue_in_thread(job))
            self.queue = []
            return
        self._pump()

    async def _requeue_in_thread(self, job: _Job) -> None:
        try:
            result = await self._run_in_thread(job.name, job.args, job.timeout)
        except Exception as exc:  # noqa: BLE001
            if not job.future.done():
                job.future.set_exception(exc)
        else:
            if not job.future.done():
                job.future.set_result(result)

    def stats(self) -> Dict[str, Any]:
        return {
            "mode": self.mode,
            "size": self.size,
            "running": self.alive(),
            "pids": self.pids(),
            "queued": len(self.queue),
            "busy": sum(1 for p in self.procs if p.job is not None),
            "completed": self.completed,
            "crashes": self.crashes,
            "timeouts": self.timeouts,
            "kills": self.kills,
            "cancelled": self.cancelled,
            "preemptions": self.preemptions,
            "home_waits": self.home_waits,
            "jobs_started": dict(self.started),  # job name -> how many were asked for
            "running_jobs": sorted(p.job.name for p in self.procs if not p.dead and p.job is not None),
            "foreground_first": self.foreground_first,
        }


def _call_job(fn, args) -> Tuple[bool, Any]:
    try:
        return True, fn(*args)
    except Exception as exc:  # noqa: BLE001
        import traceback

        return False, (f"{type(exc).__name__}: {exc}", traceback.format_exc())
