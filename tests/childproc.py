"""Run fuzz sections in a child process, so that a crash or a hang fails a probe instead of killing pytest.

Used by tests/boundary/test_fuzz_boundary.py and tests/engine/test_fuzz_records.py.
The parent (:func:`run_sections`) starts ``python <test file> --child <json spec>``
(cwd: the repository root); the test file's ``--child`` branch calls
:func:`child_main`, which runs the sections one by one. The child writes

* on stderr, before doing it: ``READY`` once set up, ``S <section>`` when a
  section starts and ``P <section> <index> <description>`` before each probe;
* on stdout, as JSON lines: ``{"t": "fail", "section", ...}`` for a probe that
  breaks the policy, ``{"t": "end", "section", "probes"}`` when a section is
  done, ``{"t": "error", "section", "tb"}`` when it raised.

When the child dies or falls silent, the parent records a failure for the probe
it was making (from the last ``P`` line) and starts a new child that skips the
probes already made, resuming after it.

The child runs a test file as a script, so that file puts ``tests/`` on
``sys.path`` itself before ``import childproc``.
"""
import json
import os
import re
import subprocess
import sys
import threading
import time
import traceback

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)

READY_TIMEOUT = 600   # import (and maybe a cold kernel compile) on 2 busy cores
PROBE_TIMEOUT = 180   # silence after READY: a hang (a section's first compile can take a minute or two)
MAX_RESTARTS = 4      # crashes/hangs per run before giving up on the rest


# ---------------------------------------------------------------------------
# parent side
# ---------------------------------------------------------------------------

def run_child(script, spec):
    """Run ``script --child spec`` to its end; (exit status, hung, stdout lines, stderr lines)."""
    cmd = [sys.executable, script, "--child", json.dumps(spec)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    out, err, last, ready = [], [], [time.time()], [False]

    def read(stream, sink, is_err):
        for line in stream:
            sink.append(line)
            last[0] = time.time()
            if is_err and line.startswith("READY"):
                ready[0] = True

    threads = [threading.Thread(target=read, args=(proc.stdout, out, False), daemon=True),
               threading.Thread(target=read, args=(proc.stderr, err, True), daemon=True)]
    for t in threads:
        t.start()
    start, hung = time.time(), False
    while proc.poll() is None:
        time.sleep(0.05)
        now = time.time()
        if (not ready[0] and now - start > READY_TIMEOUT) or (ready[0] and now - last[0] > PROBE_TIMEOUT):
            hung = True
            proc.kill()
            break
    proc.wait()
    for t in threads:
        t.join(5)
    return proc.returncode, hung, out, err


def run_sections(script, sections, extra=None):
    """{section: {"probes", "fails", "ended", "errors"}} of ``sections`` run in children of
    ``script`` (``extra``: more keys of the child's spec), resuming after crashes and hangs.
    A crash or hang is a fail of the probe being made: ``{"kind", "text", "case" (the
    first word of the probe's description), "msg": False}``."""
    remaining = list(sections)
    results = {s: {"probes": 0, "fails": [], "ended": False, "errors": []} for s in remaining}
    skip = 0  # probes of remaining[0] already made
    for _ in range(MAX_RESTARTS + 1):
        if not remaining:
            break
        rc, hung, out, err = run_child(script, dict(extra or {}, sections=remaining, skip=skip))
        for line in out:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            r = results.get(m.get("section"))
            if r is None:
                continue
            if m["t"] == "fail":
                r["fails"].append(m)
            elif m["t"] == "end":
                r["probes"] += m["probes"]
                r["ended"] = True
            elif m["t"] == "error":
                r["errors"].append(m["tb"])
                r["ended"] = True
        cur, last_probe = None, None        # where did the child stop?
        for line in err:
            if line.startswith("S "):
                cur, last_probe = line[2:].strip(), None
            elif line.startswith("P "):
                last_probe = line
        first = remaining[0]
        remaining = [s for s in remaining if not results[s]["ended"]]
        if not remaining:
            break
        if rc == 0 and not hung:
            for s in remaining:
                results[s]["errors"].append("child exited without reporting this section")
            break
        tail = "".join(line for line in err if not line.startswith(("P ", "S "))).strip()[-1500:]
        how = "hang (no output for %d s)" % PROBE_TIMEOUT if hung else "crash (exit status %s)" % rc
        if cur not in remaining:
            for s in remaining:
                results[s]["errors"].append("%s before the section started; stderr tail: %s" % (how, tail))
            break
        remaining = remaining[remaining.index(cur):]
        old_skip = skip if cur == first else 0
        if last_probe is not None:
            _, sec, idx, desc = last_probe.rstrip("\n").split(" ", 3)
            results[sec]["probes"] += int(idx) + 1 - old_skip
            results[sec]["fails"].append({"t": "fail", "section": sec, "case": desc.split(" ", 1)[0], "kind": how,
                                          "text": "%s; child stderr tail: %s" % (desc, tail), "msg": False})
            skip = int(idx) + 1
        else:
            results[cur]["errors"].append("%s outside a probe; stderr tail: %s" % (how, tail))
            results[cur]["ended"] = True
            remaining = remaining[1:]
            skip = 0
    else:
        for s in remaining:
            results[s]["errors"].append("gave up after %d crashes/hangs" % MAX_RESTARTS)
    return results


def format_fails(name, fails, probes, noun="probes"):
    """A failure report: counts by kind, then one line per distinct failure (at most 25)."""
    kinds = {}
    for f in fails:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    lines = ["%s: %d of %d %s break the policy: %s" % (name, len(fails), probes, noun, kinds)]
    seen = set()
    for f in fails:
        key = (f["kind"], re.sub(r"\d+", "N", f["text"])[:70])
        if key in seen:
            continue
        seen.add(key)
        lines.append("  [%s] %s" % (f["kind"], f["text"][:500]))
        if len(lines) > 25:
            break
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# child side
# ---------------------------------------------------------------------------

_RESULTS = None  # the child's result stream (the real fd 1); sys.stdout is sent to stderr


def emit(obj):
    _RESULTS.write(json.dumps(obj) + "\n")
    _RESULTS.flush()


def say(text):
    """One line on stderr, written at once (the parent reads it as progress)."""
    os.write(2, (text.replace("\n", " ") + "\n").encode("utf-8", "replace"))


def short(x, n=120):
    """``repr(x)`` on one line, at most ``n`` characters; never fails (an int past
    Python's int-to-str limit, a broken ``__repr__``)."""
    try:
        s = repr(x)
    except Exception as e:  # noqa: BLE001
        s = "<repr failed: %s>" % type(e).__name__
    s = s.replace("\n", " ")
    return s if len(s) <= n else s[:n] + "..."


def safe_repr(x):
    """``repr(x)``, or None when it fails (an int of more than 4300 digits)."""
    try:
        return repr(x)
    except Exception:  # noqa: BLE001
        return None


class Reporter:
    """Probe counter of one section; ``start`` announces a probe (False: skipped on a resume)."""

    def __init__(self, section, skip):
        self.section, self.skip, self.n = section, skip, 0

    def start(self, what):
        i = self.n
        self.n += 1
        if i < self.skip:
            return False
        say("P %s %d %s" % (self.section, i, what[:300]))
        return True

    def emit_fail(self, **fields):
        emit(dict(fields, t="fail", section=self.section))


def child_main(spec, setup, run_section, reporter=Reporter):
    """The child: ``context = setup(spec)``, then ``run_section(name, rep, context)`` for each
    section of ``spec`` (``rep``: a ``reporter``), reporting as the module docstring says."""
    import warnings
    warnings.simplefilter("ignore")
    global _RESULTS
    _RESULTS = os.fdopen(os.dup(1), "w")
    sys.stdout.flush()
    os.dup2(2, 1)
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    context = setup(spec)
    say("READY")
    skip = spec.get("skip", 0)
    for sec in spec["sections"]:
        say("S " + sec)
        rep = reporter(sec, skip)
        skip = 0
        try:
            run_section(sec, rep, context)
        except Exception:  # noqa: BLE001
            emit({"t": "error", "section": sec, "tb": traceback.format_exc()[-3000:]})
        else:
            emit({"t": "end", "section": sec, "probes": rep.n - rep.skip})
