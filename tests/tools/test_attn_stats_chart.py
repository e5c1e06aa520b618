#!/usr/bin/env python3
"""Unit tests of experiments/attn_stats_chart.py (standard library only).

    python3 tests/tools/test_attn_stats_chart.py        # from the repository root or anywhere

Every input is an attn attn-stats document built here: the chart has one line per model file
and layer, its points where the numbers put them, and bad input ends with exit status 2, one
line and no SVG.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "experiments", "attn_stats_chart.py")
SVG = "{http://www.w3.org/2000/svg}"


def stats(value):
    return {"rows": 10, "single_key_rows": 0, "empty_rows": 0, "entropy": value, "normalised_entropy": value,
            "max_weight": value, "distance": value, "mass_within": value}


def document(model, arch, layers, values, mean_source):
    """values[l]: the pooled statistic of layer l, the same in every component."""
    def component():
        return {"from": "source", "to": "source", "layers": [
            {"layer": l, "mechanism": "mha", "all_heads": stats(values[l]),
             "heads": [dict(head=0, **stats(values[l]))]} for l in range(layers)]}
    return {"format": "attn-attention-stats", "version": 1, "attn_version": "0", "mode": "forced", "search": None,
            "model": {"file": model, "config": {"arch": arch}, "encoder_mixers": ["mha"] * layers,
                      "decoder_mixers": ["mha"] * layers},
            "within": 2, "sentences": 3, "empty_sources": 0,
            "source_tokens": {"total": 3 * mean_source, "mean": mean_source},
            "target_tokens": {"total": 30, "mean": 10},
            "components": {"encoder": component(), "decoder": component(), "cross": component()}}


class ChartTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def run_chart(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_one_line_per_model_and_layer(self):
        files = []
        for k in (1, 2, 4):
            files.append("%d=%s" % (k, self.write("a%d.json" % k, document("a.attn", "muse", 2, [0.9 / k, 0.5], 10 * k))))
            files.append("%d=%s" % (k, self.write("b%d.json" % k, document("b.attn", "fastdisa", 3, [0.2, 0.3, 0.4], 10 * k))))
        out = os.path.join(self.dir.name, "chart.svg")
        r = self.run_chart(out, *files, "--component", "cross")
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.parse(out).getroot()
        lines = [p for p in root.iter(SVG + "polyline") if p.get("class") == "series"]
        self.assertEqual(len(lines), 5)
        titles = sorted(p.find(SVG + "title").text for p in lines)
        self.assertEqual(titles, ["fastdisa layer 0", "fastdisa layer 1", "fastdisa layer 2", "muse layer 0",
                                  "muse layer 1"])
        # Three points each, x increasing; muse layer 0 falls as 0.9/K, so its y pixels grow.
        muse0 = next(p for p in lines if p.find(SVG + "title").text == "muse layer 0")
        pts = [tuple(map(float, xy.split(","))) for xy in muse0.get("points").split()]
        self.assertEqual(len(pts), 3)
        self.assertTrue(pts[0][0] < pts[1][0] < pts[2][0])
        self.assertTrue(pts[0][1] < pts[1][1] < pts[2][1])
        # A flat line stays flat.
        flat = next(p for p in lines if p.find(SVG + "title").text == "muse layer 1")
        ys = {xy.split(",")[1] for xy in flat.get("points").split()}
        self.assertEqual(len(ys), 1)
        with open(out, encoding="utf-8") as f:
            self.assertIn("×4", f.read())

    def test_two_models_of_one_arch_are_told_apart(self):
        a = self.write("a.json", document("runs/s1.attn", "muse", 1, [0.5], 10))
        b = self.write("b.json", document("runs/s2.attn", "muse", 1, [0.6], 10))
        out = os.path.join(self.dir.name, "c.svg")
        r = self.run_chart(out, a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        titles = sorted(p.find(SVG + "title").text for p in ET.parse(out).getroot().iter(SVG + "polyline"))
        self.assertEqual(titles, ["muse (runs/s1.attn) layer 0", "muse (runs/s2.attn) layer 0"])

    def test_run_folders_mean_over_seeds_per_group_and_layer(self):
        # OUT/<group>/seed<N>/stats/<set>[.join<K>].best.json, as experiments/attn_stats_runs.sh writes them.
        runs = []
        for group, seeds in (("muse", {1: 0.4, 2: 0.6}), ("transformer", {1: 0.2, 3: 0.3})):
            for seed, value in seeds.items():
                run = os.path.join(self.dir.name, "cmp", group, f"seed{seed}")
                os.makedirs(os.path.join(run, "stats"))
                for k, name in ((1, "test2016"), (2, "test2016.join2"), (8, "test2016.join8")):
                    self.write(os.path.join(run, "stats", f"{name}.best.json"),
                               document(f"{run}/best.attn", group, 2, [value * k, value], 10 * k))
                self.write(os.path.join(run, "stats", "other.best.json"), document("x", group, 2, [9, 9], 1))
                self.write(os.path.join(run, "stats", "test2016.avg5.json"), document("x", group, 2, [9, 9], 1))
                runs.append(run)
        out = os.path.join(self.dir.name, "runs.svg")
        r = self.run_chart(out, *runs, "--metric", "max_weight")
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.parse(out).getroot()
        lines = {p.find(SVG + "title").text: p for p in root.iter(SVG + "polyline") if p.get("class") == "series"}
        self.assertEqual(sorted(lines), ["muse layer 0", "muse layer 1", "transformer layer 0", "transformer layer 1"])
        points = sorted(c.find(SVG + "title").text for c in root.iter(SVG + "circle"))
        # Layer 0 at ×K is value·K: the mean of seeds 0.4 and 0.6 is 0.5·K; of 0.2 and 0.3, 0.25·K.
        for expected in ("muse layer 0: 0.5000", "muse layer 0: 1.0000", "muse layer 0: 4.0000",
                         "transformer layer 0: 0.2500", "transformer layer 1: 0.2500", "muse layer 1: 0.5000"):
            self.assertIn(expected, points)
        self.assertEqual(len(points), 12)  # 4 lines at ×1, ×2, ×8: other sets and models are not read
        with open(out, encoding="utf-8") as f:
            self.assertIn("mean over seeds", f.read())
        # OUT "-": the same points as a Markdown table, a row per group and layer, a column per ×K.
        r = self.run_chart("-", *runs, "--metric", "max_weight")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = r.stdout.strip().split("\n")
        self.assertIn("×1, ×2, ×8", rows[0])
        self.assertEqual(len(rows), 2 + 4)
        self.assertIn("| muse | 0 | 0.500, 1.000, 4.000 |", rows)
        self.assertIn("| transformer | 1 | 0.250, 0.250, 0.250 |", rows)
        # Run folders and files are not mixed; a run without stats/ is an error.
        bare = os.path.join(self.dir.name, "bare")
        os.makedirs(bare)
        for args in ([out + "2.svg", runs[0], self.write("g.json", document("a", "muse", 1, [0.5], 10))],
                     [out + "2.svg", bare], [out + "2.svg", runs[0], "--set", "test2017"]):
            r = self.run_chart(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(out + "2.svg"))

    def test_bad_input_one_line_exit_2_no_file(self):
        good = self.write("g.json", document("a.attn", "muse", 1, [0.5], 10))
        other = self.write("o.json", {"format": "attn-attention", "version": 1})
        broken = self.write("x.json", "{not json")
        out = os.path.join(self.dir.name, "bad.svg")
        for args in ([out], [out, os.path.join(self.dir.name, "none.json")], [out, other], [out, broken],
                     [out, "x=" + good], [out, "1=" + good, good], [out, good, "--metric", "bleu"],
                     [out, good, "--component", "all"], [os.path.join(self.dir.name, "bad.png"), good]):
            r = self.run_chart(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
