#!/usr/bin/env python3
"""A stand-in for `attn serve` to work on its page without the server.

    dev/serve_page_mock.py --page PAGE.html --attn build/attn \
        --model muse=runs/a/best.attn --model transformer=runs/b/best.attn [--port 8765]

Serves PAGE.html (the text of attn::serve::serve_page()) at / and answers the
page's API (include/attn/serve/page.h) by running the real `attn info --json`
and `attn attend` once per model and request: GET /v1/models,
POST /v1/attend {"models", "sentences" (one; or the deprecated "sentence"), "beam"}; errors are
{"error": {"status", "message"}} with that status.
"""
import argparse
import json
import subprocess
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--page", required=True)
    ap.add_argument("--attn", default="build/attn")
    ap.add_argument("--model", action="append", default=[], help="NAME=FILE, repeatable")
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()

    files = dict(m.split("=", 1) for m in args.model)
    models = []
    for name, path in files.items():
        info = json.loads(subprocess.run([args.attn, "info", "--json", path], check=True,
                                         capture_output=True, text=True).stdout)
        # The mixers per layer come with a document; one word is enough to get one.
        doc = json.loads(subprocess.run([args.attn, "attend", "-m", path, "--components", "cross", "--layers", "0"],
                                        input="a\n", check=True, capture_output=True, text=True).stdout)
        models.append({"name": name, "file": path, "arch": info["config"].get("arch"), "parameters": info["parameters"],
                       "config": info["config"], "encoder_mixers": doc["model"]["encoder_mixers"],
                       "decoder_mixers": doc["model"]["decoder_mixers"]})

    class Handler(BaseHTTPRequestHandler):
        def reply(self, status, body, kind="application/json"):
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, message):
            self.reply(status, {"error": {"status": status, "message": message}})

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/":
                with open(args.page, "rb") as f:  # read again each time: the page may be rebuilt meanwhile
                    self.reply(200, f.read(), "text/html; charset=utf-8")
            elif path == "/v1/models":
                self.reply(200, {"models": models})
            else:
                self.error(404, "no such resource: " + path)

        def do_POST(self):
            if self.path != "/v1/attend":
                return self.error(404, "no such resource: " + self.path)
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            except ValueError as e:
                return self.error(400, "the body is not JSON: " + str(e))
            if isinstance(req, dict) and "sentence" not in req and isinstance(req.get("sentences"), list) and len(req["sentences"]) == 1:
                req["sentence"] = req["sentences"][0]
            if not isinstance(req, dict) or not isinstance(req.get("sentence"), str) or not req["sentence"].strip():
                return self.error(400, "\"sentences\" must be an array of one non-empty string")
            names = req.get("models") or list(files)
            unknown = [n for n in names if n not in files]
            if unknown:
                return self.error(400, "unknown model: " + ", ".join(unknown))
            beam = req.get("beam", 5)
            if not isinstance(beam, int) or beam < 1:
                return self.error(400, "\"beam\" must be a whole number >= 1")
            results = []
            for n in names:
                run = subprocess.run([args.attn, "attend", "-m", files[n], "--beam", str(beam)],
                                     input=req["sentence"].replace("\n", " ") + "\n", capture_output=True, text=True)
                if run.returncode != 0:
                    return self.error(500, n + ": " + run.stderr.strip())
                results.append({"model": n, "document": json.loads(run.stdout)})
            self.reply(200, {"results": results})

    print(f"serving on http://127.0.0.1:{args.port}/", flush=True)
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
