#!/usr/bin/env python3
"""Does the page of `attn serve` draw maps in a real browser?

    dev/serve_page_check.py [--browser chromium|firefox] URL [--shot PNG] MODEL_NAME...

Opens URL/?s=<sentence>&models=<names> headless and exits 0 when the page says
<body data-state="drawn"> and every named model's panel (section[data-model=NAME])
holds an svg.map with cells; otherwise prints one line saying why and exits 1
(2: bad usage or no such browser). SENTENCE (environment) overrides the sentence.

chromium (the default; CHROMIUM names the binary): --dump-dom after the page's
script ran, read as text. firefox (firefox-esr; FIREFOX names the binary):
its Marionette remote protocol, length-prefixed JSON over TCP
("LEN:[0, id, command, params]"), asking the live DOM; --shot saves a screenshot.
"""
import base64
import html
import json
import os
import re
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


def chromium_check(chromium, page, models):
    """What Chromium drew: {"state", "panels": {model: cells}, "status"}, or None when it returned no page."""
    profile = tempfile.mkdtemp(prefix="attn-chromium-")
    try:
        # Virtual time stands still while the API requests are in flight, so the
        # budget counts only the page's own work; the timeout bounds a server that hangs.
        done = subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                               "--hide-scrollbars", "--user-data-dir=" + profile, "--virtual-time-budget=10000",
                               "--window-size=1600,1400", "--dump-dom", page],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300)
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    dom = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0 or not dom:
        return None
    body = re.search(r'<body[^>]*?data-state="([a-z]*)"', dom)
    status = re.search(r'id="status"[^>]*>(.*?)</div>', dom, re.S)
    panels = {}
    for name in models:
        key = 'data-model="%s"' % html.escape(name)
        at = dom.find(key)
        if at < 0:
            continue
        panel = dom[at + len(key):]
        end = panel.find("data-model=")
        panel = panel[:end] if end >= 0 else panel
        svg = panel.find('<svg class="map')
        panels[name] = 0 if svg < 0 else len(re.findall(r'<rect class="[cd]"', panel[svg:]))
    return {"state": body.group(1) if body else "none", "panels": panels,
            "status": re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", status.group(1))) if status else ""}


def firefox_check(firefox, page, shot):
    """What Firefox drew, as chromium_check says it; raises RuntimeError or OSError when Marionette fails."""
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
        return seen
    finally:
        try:
            browser.wait(timeout=20)
        except subprocess.TimeoutExpired:
            browser.kill()
        shutil.rmtree(profile, ignore_errors=True)


def main():
    args = sys.argv[1:]
    options = {"--shot": None, "--browser": "chromium"}
    for flag in options:
        if flag in args:
            at = args.index(flag)
            if at + 1 >= len(args):
                print("serve_page_check: %s needs a value" % flag, file=sys.stderr)
                return 2
            options[flag] = args[at + 1]
            del args[at:at + 2]
    browser = options["--browser"]
    if len(args) < 2 or browser not in ("chromium", "firefox"):
        print("usage: " + __doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    if options["--shot"] and browser != "firefox":
        print("serve_page_check: --shot needs --browser firefox (Chromium: dev/screenshot.sh serve)", file=sys.stderr)
        return 2
    url, models = args[0].rstrip("/"), args[1:]
    if browser == "firefox":
        binary = os.environ.get("FIREFOX") or shutil.which("firefox-esr") or shutil.which("firefox")
        install = "apt-get install firefox-esr"
    else:
        binary = os.environ.get("CHROMIUM") or shutil.which("chromium")
        install = "apt-get install chromium"
    if not binary:
        print("serve_page_check: %s is not installed (%s)" % (browser, install), file=sys.stderr)
        return 2
    sentence = os.environ.get("SENTENCE", "Ein kleiner Hund läuft über die Wiese.")
    page = url + "/?" + urllib.parse.urlencode({"s": sentence, "models": ",".join(models)})
    if browser == "firefox":
        try:
            seen = firefox_check(binary, page, options["--shot"])
        except (RuntimeError, OSError) as e:
            print("serve_page_check: %s" % e)
            return 1
    else:
        seen = chromium_check(binary, page, models)
        if seen is None:
            print("serve_page_check: chromium returned no page for %s (is the server up?)" % page)
            return 1
    if seen.get("state") != "drawn":
        print("serve_page_check: the page is '%s', not drawn: %s" % (seen.get("state"), seen.get("status", "").strip()))
        return 1
    empty = [name for name in models if seen["panels"].get(name, 0) == 0]
    if empty:
        print("serve_page_check: no maps drawn for %s (panels: %s)" % (", ".join(empty), seen["panels"]))
        return 1
    print("serve_page_check: drawn in %s: " % browser + ", ".join("%s %d cells" % (k, v) for k, v in seen["panels"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
