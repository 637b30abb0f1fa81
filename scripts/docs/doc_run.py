"""One document's run: its generated script in a new session, each block's
output to its own log as it arrives, --block-timeout and --timeout enforced by
stopping the session's processes. Used by run-doc-commands.py; Linux (/proc),
standard library only. Process discovery is the sweep's (harness/sweep)."""

import os
import queue
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "harness", "sweep"))
from mpsbench_sweep import procs  # noqa: E402

from doc_blocks import build_script  # noqa: E402


def live_members(sid, exclude=None, still=lambda: True):
    """The live processes of session `sid` but pid `exclude`; none once still() is false."""
    return lambda: [p for p in procs.session_members(sid) if p.pid != exclude] if still() else []


def stop_members(get_live, grace=5.0):
    """SIGTERM to what get_live() reports, SIGKILL after grace (the sweep's procs.terminate)."""
    procs.terminate(get_live, grace, 2.0)


class DocRun:
    def __init__(self, path, blocks, args, log_dir, stem):
        self.path, self.blocks, self.args = path, blocks, args
        self.stem = stem
        self.block_dir = os.path.join(log_dir, stem)
        self.script_path = os.path.join(log_dir, stem + ".sh")
        self.transcript_path = os.path.join(log_dir, stem + ".log")
        self.current = None
        self.started = None
        self.last_ended = None  # number of the last block whose end marker was read from the pipe
        self.proc = None
        self.lock = threading.Lock()
        self.timed_out_doc = False
        self.interrupted = None

    def watchdog(self, doc_deadline):
        while self.proc.poll() is None:
            time.sleep(0.25)
            with self.lock:
                cur, started = self.current, self.started
            now = time.monotonic()
            if doc_deadline and now > doc_deadline and not self.timed_out_doc:
                self.timed_out_doc = True
                self.say(f"run-doc-commands: document timeout ({self.args.timeout:g} s): stopping it")
                stop_members(live_members(self.proc.pid))
                return
            if cur is not None and self.args.block_timeout and now - started > self.args.block_timeout:
                if not cur.note:
                    cur.note = "timeout"
                    self.say(f"run-doc-commands: block {cur.number} ran past --block-timeout "
                             f"{self.args.block_timeout:g} s: stopping its commands, going on with the next block")
                # Every poll while the block lasts: bash goes on with the block's next command.
                # Nothing once its end marker has been read, so the next block's commands are never
                # touched, even while the main loop still works through the block's queued output.
                stop_members(live_members(self.proc.pid, exclude=self.proc.pid,
                                          still=lambda: self.current is cur and self.last_ended != cur.number))

    def say(self, text):
        print(text, flush=True)
        with open(self.transcript_path, "a", encoding="utf-8") as t:
            t.write(text + "\n")

    def run(self, root, token):
        os.makedirs(self.block_dir, exist_ok=True)
        with open(self.script_path, "w", encoding="utf-8") as f:
            f.write(build_script(self.blocks, root, token, self.path))
        open(self.transcript_path, "w").close()
        by_number = {b.number: b for b in self.blocks}
        begin = re.compile(re.escape(token) + r" begin (\d+)$")
        end = re.compile(re.escape(token) + r" end (\d+) (\d+)$")
        self.proc = subprocess.Popen(["bash", self.script_path], cwd=root, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.args.timeout if self.args.timeout else None
        dog = threading.Thread(target=self.watchdog, args=(deadline,), daemon=True)
        dog.start()
        block_log = None
        pending_blank = False
        transcript = open(self.transcript_path, "a", encoding="utf-8")
        lines = queue.Queue()

        def reader():
            for raw in iter(self.proc.stdout.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                m = end.match(line)
                if m:
                    with self.lock:
                        self.last_ended = int(m.group(1))
                lines.put(line)
            lines.put(None)

        # A thread reads, so that a process left behind holding the pipe open (a daemon
        # started without redirecting its output) cannot keep the runner waiting.
        threading.Thread(target=reader, daemon=True).start()
        exited_at = None
        try:
            while True:
                try:
                    line = lines.get(timeout=0.25)
                except queue.Empty:
                    if self.proc.poll() is None:
                        continue
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at < 2.0:
                        continue
                    self.say("run-doc-commands: bash exited but a process it started still holds its output "
                             "open; not waiting for it")
                    break
                if line is None:
                    break
                m = begin.match(line)
                if m:
                    pending_blank = False
                    b = by_number[int(m.group(1))]
                    with self.lock:
                        self.current, self.started = b, time.monotonic()
                    header = f"==== block {b.number} (line {b.line}, {b.lang} {b.kind}) {b.section}"
                    cmd = "\n".join("$ " + c for c in b.text.rstrip("\n").splitlines())
                    block_log = open(os.path.join(self.block_dir, f"block-{b.number:02d}.log"), "w",
                                     encoding="utf-8")
                    for sink in (block_log, transcript):
                        sink.write(header + "\n" + cmd + "\n")
                        sink.flush()
                    if not self.args.quiet:
                        print(header + "\n" + cmd, flush=True)
                    else:
                        print(f"[block {b.number}] {b.first_line[:100]}", flush=True)
                    continue
                m = end.match(line)
                if m:
                    pending_blank = False
                    b = by_number[int(m.group(1))]
                    with self.lock:
                        b.seconds = time.monotonic() - self.started
                        b.status = int(m.group(2))
                        self.current = None
                    tail = f"---- block {b.number}: exit status {b.status}{' (' + b.note + ')' if b.note else ''}, " \
                           f"{b.seconds:.1f} s"
                    for sink in (block_log, transcript):
                        sink.write(tail + "\n")
                        sink.flush()
                    block_log.close()
                    block_log = None
                    print(tail, flush=True)
                    continue
                # the marker's leading newline adds one empty line when the output ended with one
                if pending_blank:
                    self._emit("", block_log, transcript)
                    pending_blank = False
                if line == "":
                    pending_blank = True
                    continue
                self._emit(line, block_log, transcript)
        except KeyboardInterrupt:
            self.interrupted = 130
        finally:
            if self.interrupted or self.proc.poll() is None:
                stop_members(live_members(self.proc.pid))
            self.proc.wait()
            left = live_members(self.proc.pid)()
            if left:
                self.say("run-doc-commands: still running after the document ended (started by it, not stopped): " +
                         ", ".join(f"pid {p.pid} ({p.describe()['cmdline'][:120] or '?'})" for p in left))
            cur = self.current
            if cur is not None and cur.status is None:
                cur.seconds = time.monotonic() - self.started
                cur.note = "killed" if not self.timed_out_doc else "timeout"
                if block_log:
                    block_log.write(f"---- block {cur.number}: {cur.note} after {cur.seconds:.1f} s\n")
            if block_log:
                block_log.close()
            for b in self.blocks:
                if b.status is None and not b.note:
                    b.note = "not run"
            transcript.close()
        return self.proc.returncode

    def _emit(self, line, block_log, transcript):
        if not self.args.quiet:
            print(line, flush=True)
        for sink in (block_log, transcript):
            if sink:
                sink.write(line + "\n")
        if block_log:
            block_log.flush()
        transcript.flush()
