"""Line coverage of the user's files (sys.monitoring on 3.12+, sys.settrace before)."""
import sys

from . import userfiles as _uf
from .userfiles import _display_file


class Coverage:
    """Lines of the user's files that ran; new lines are flushed as ``lines`` events."""
    def __init__(self, is_user_file):
        self.is_user_file = is_user_file
        self.lines = {}  # filename -> set of rows
        self.new = {}  # filename -> list of rows not yet flushed
        self.saturated = set()  # code objects whose every line ran (settrace: stop tracing them)
        self.code_lines = {}
        self.mode = None
        self.mode_used = None

    # -- sys.monitoring (3.12+): every (code, line) costs one call, then is disabled
    def start(self):
        mon = getattr(sys, "monitoring", None)
        if mon is not None:
            for tool in (mon.COVERAGE_ID, 4, 5):
                try:
                    mon.use_tool_id(tool, "gradwarden")
                except ValueError:
                    continue
                self.tool = tool
                mon.register_callback(tool, mon.events.LINE, self._mon_line)
                mon.set_events(tool, mon.events.LINE)
                self.mode = "monitoring"
                return
        import threading

        sys.settrace(self._global)
        threading.settrace(self._global)
        self.mode = "settrace"

    def stop(self):
        if self.mode == "monitoring":
            mon = sys.monitoring
            try:
                mon.set_events(self.tool, 0)
                mon.register_callback(self.tool, mon.events.LINE, None)
                mon.free_tool_id(self.tool)
            except Exception:  # noqa: BLE001
                pass
        elif self.mode == "settrace":
            import threading

            sys.settrace(None)
            threading.settrace(None)
        if self.mode:
            self.mode_used = self.mode
        self.mode = None

    def _mon_line(self, code, line):
        fn = code.co_filename
        u = _uf._ucache.get(fn)
        if u is None:
            u = self.is_user_file(fn)
        if u:
            self._add(fn, line)
        return sys.monitoring.DISABLE

    # -- sys.settrace (before 3.12): user frames only; a code object stops being traced once
    #    every line of it has run
    def _global(self, frame, event, arg):
        code = frame.f_code
        if code in self.saturated:
            return None
        fn = code.co_filename
        u = _uf._ucache.get(fn)
        if u is None:
            u = self.is_user_file(fn)
        if not u:
            return None
        self._add(fn, frame.f_lineno)
        return self._local

    def _local(self, frame, event, arg):
        if event == "line":
            fn = frame.f_code.co_filename
            seen = self.lines.get(fn)
            line = frame.f_lineno
            if seen is None or line not in seen:
                self._add(fn, line)
                self._check_saturated(frame.f_code)
        return self._local

    def _check_saturated(self, code):
        want = self.code_lines.get(code)
        if want is None:
            try:
                want = {ln for _, _, ln in code.co_lines() if ln is not None}
            except Exception:  # noqa: BLE001
                want = set()
            want.discard(code.co_firstlineno)
            self.code_lines[code] = want
        seen = self.lines.get(code.co_filename, ())
        if want and want.issubset(seen):
            self.saturated.add(code)

    def _add(self, fn, line):
        seen = self.lines.get(fn)
        if seen is None:
            seen = self.lines[fn] = set()
        if line not in seen:
            seen.add(line)
            self.new.setdefault(fn, []).append(line)

    def take_new(self):
        new, self.new = self.new, {}
        return {_display_file(fn): sorted(rows) for fn, rows in new.items()}
