"""A headless Chromium driven over the DevTools protocol, for the HTML
report's browser tests and benchmark (tests/cli/html_values.sh,
bench/html.sh).

No websocket library and no browser download: Debian's chromium with
--remote-debugging-pipe reads the protocol's JSON messages, each ended by a
NUL byte, from its file descriptor 3 and writes its own to 4.  The page
runs in real time (no virtual time budget), so the report's own
performance.now() marks are wall times.
"""
import json
import os
import subprocess
import tempfile
import time


class Chrome:
    def __init__(self, chromium, width=1280, height=900, env=None, args=()):
        self.tmp = tempfile.mkdtemp(prefix="pm-cdp-")
        to_r, self._to_w = os.pipe()      # we write, chromium reads (its fd 3)
        self._from_r, from_w = os.pipe()  # chromium writes (its fd 4), we read

        def fds():
            # (a pipe's end may already be 3 or 4: dup2 then keeps its
            # close-on-exec flag, so clear it on both)
            if from_w == 3:
                os.dup2(from_w, 5)
                os.dup2(to_r, 3)
                os.dup2(5, 4)
            else:
                os.dup2(to_r, 3)
                os.dup2(from_w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--remote-debugging-pipe",
             "--user-data-dir=" + os.path.join(self.tmp, "profile"),
             "--window-size=%d,%d" % (width, height)] + list(args) + ["about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=fds, env=env)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events = []
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = [t for t in targets if t["type"] == "page"][0]
        self.session = self.call("Target.attachToTarget",
                                 targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")

    def _read(self, deadline):
        while b"\0" not in self._buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_r, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed its pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, timeout=30, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr[:80], r["exceptionDetails"]))
        return r["result"].get("value")

    def open(self, url, ready="document.body && document.body.dataset.drawnMs", timeout=30):
        """Navigate and wait until the expression is true."""
        self.call("Page.navigate", url=url)
        deadline = time.time() + timeout
        while not self.eval("!!(%s)" % ready):
            if time.time() > deadline:
                raise TimeoutError("%s: not ready" % url)
            time.sleep(0.02)

    def mouse(self, kind, x, y, button="none", clicks=0):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button=button,
                  clickCount=clicks)

    def console(self):
        """Console messages, log entries and requests seen so far, as text."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                out.append("console.%s: %s" % (p["type"], [a.get("value") for a in p["args"]]))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: %s" % p["exceptionDetails"].get("text"))
            elif m == "Log.entryAdded":
                out.append("log %s: %s" % (p["entry"]["level"], p["entry"]["text"]))
            elif m == "Network.requestWillBeSent" and not p["request"]["url"].startswith("file:"):
                out.append("request: %s" % p["request"]["url"][:120])
        return out

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        os.close(self._from_r)
        subprocess.run(["rm", "-rf", self.tmp])
