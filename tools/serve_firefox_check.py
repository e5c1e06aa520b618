#!/usr/bin/env python3
"""Does the page of `attn serve` draw maps in Firefox? (Chromium: serve_browser_check.sh)

    tools/serve_firefox_check.py URL [--shot PNG] MODEL_NAME...

Starts headless Firefox (Debian's firefox-esr) with its Marionette remote
protocol, opens URL/?s=<sentence>&models=<names>, waits until the page says
<body data-state="drawn"> (or "error"), and exits 0 when every named model's
panel holds an svg.map with cells; otherwise prints one line saying why and
exits 1 (2: bad usage or no Firefox). --shot saves a screenshot.
Marionette speaks length-prefixed JSON over TCP: "LEN:[0, id, command, params]".
"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Marionette:
    def __init__(self, port):
        for _ in range(200):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("Firefox's Marionette did not answer on port %d" % port)
        self.stream = self.sock.makefile("rb")
        self.next_id = 0
        self.read()  # the server's greeting

    def read(self):
        length = b""
        while not length.endswith(b":"):
            byte = self.stream.read(1)
            if not byte:
                raise RuntimeError("Marionette closed the connection")
            length += byte
        return json.loads(self.stream.read(int(length[:-1])))

    def call(self, command, params):
        self.next_id += 1
        data = json.dumps([0, self.next_id, command, params]).encode()
        self.sock.sendall(str(len(data)).encode() + b":" + data)
        reply = self.read()
        if reply[2]:
            raise RuntimeError("%s: %s" % (command, reply[2].get("message", reply[2])))
        return reply[3]


def main():
    args = sys.argv[1:]
    shot = None
    if "--shot" in args:
        at = args.index("--shot")
        shot = args[at + 1]
        del args[at:at + 2]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    url, models = args[0].rstrip("/"), args[1:]
    firefox = os.environ.get("FIREFOX") or shutil.which("firefox-esr") or shutil.which("firefox")
    if not firefox:
        print("serve_firefox_check: Firefox is not installed (apt-get install firefox-esr)", file=sys.stderr)
        return 2
    sentence = os.environ.get("SENTENCE", "Ein kleiner Hund läuft über die Wiese.")
    page = url + "/?" + urllib.parse.urlencode({"s": sentence, "models": ",".join(models)})
    profile = tempfile.mkdtemp(prefix="attn-firefox-")
    port = free_port()
    with open(os.path.join(profile, "user.js"), "w") as prefs:
        prefs.write('user_pref("marionette.port", %d);\n' % port)
    browser = subprocess.Popen([firefox, "--headless", "--marionette", "--no-remote", "--profile", profile],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        m = Marionette(port)
        m.call("WebDriver:NewSession", {"capabilities": {}})
        m.call("WebDriver:SetWindowRect", {"width": 1600, "height": 1300})
        m.call("WebDriver:Navigate", {"url": page})
        probe = ("const b = document.body.dataset.state;"
                 "const p = {}; for (const s of document.querySelectorAll('section.model-panel'))"
                 "  p[s.dataset.model] = s.querySelectorAll('svg.map rect').length;"
                 "const e = document.getElementById('status');"
                 "return JSON.stringify({state: b, panels: p, status: e ? e.textContent : ''});")
        seen = {}
        deadline = time.time() + 90
        while time.time() < deadline:
            seen = json.loads(m.call("WebDriver:ExecuteScript", {"script": probe, "args": []})["value"])
            if seen["state"] in ("drawn", "error"):
                break
            time.sleep(0.25)
        if shot:
            png = m.call("WebDriver:TakeScreenshot", {"full": False})["value"]
            with open(shot, "wb") as out:
                out.write(base64.b64decode(png))
        m.call("Marionette:Quit", {})
    except (RuntimeError, OSError) as e:
        print("serve_firefox_check: %s" % e)
        return 1
    finally:
        try:
            browser.wait(timeout=20)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)
    if seen.get("state") != "drawn":
        print("serve_firefox_check: the page is '%s', not drawn: %s" % (seen.get("state"), seen.get("status", "").strip()))
        return 1
    empty = [name for name in models if seen["panels"].get(name, 0) == 0]
    if empty:
        print("serve_firefox_check: no maps drawn for %s (panels: %s)" % (", ".join(empty), seen["panels"]))
        return 1
    print("serve_firefox_check: drawn in Firefox: " + ", ".join("%s %d cells" % (k, v) for k, v in seen["panels"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
